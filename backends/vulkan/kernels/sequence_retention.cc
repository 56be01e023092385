// seqrt::Retention on Vulkan. Recurrent form (shader seq_retention): one
// dispatch over every (batch, head) and value column. Chunkwise form for
// long prompts (seq_retention_chunk_update, _scan, _output): the state is
// stored once per chunk and the chunks' outputs run in parallel. The
// decays go to the shaders as a small buffer filled by the recorder.
#include <cmath>

#include "backends/vulkan/kernels/sequence_util.h"
#include "backends/vulkan/tiling.h"

namespace seqrt::vulkan {
namespace {

enum Input { kQ, kK, kV, kPastState };
constexpr uint32_t kHasPast = 1, kHasPresent = 2;

struct RetentionDims {
  int64_t batch, heads, length, dk, dv;
};

// The same checks as the reference kernel's check_retention (OPS.md), on
// dims only: the tensors live on the device.
Result<RetentionDims> retention_dims(const NodeArgs& args) {
  SEQRT_ASSIGN_OR_RETURN(auto q, dims_of(args, kQ, 4, "Retention"));
  SEQRT_ASSIGN_OR_RETURN(auto k, dims_of(args, kK, 4, "Retention"));
  SEQRT_ASSIGN_OR_RETURN(auto v, dims_of(args, kV, 4, "Retention"));
  const std::string label = args.node->label();
  if (k != q) {
    return invalid_argument(
        "{}: input 'K' must be (B,H,T,dk) = {} like Q, got {}", label,
        dims_to_string(q), dims_to_string(k));
  }
  if (v[0] != q[0] || v[1] != q[1] || v[2] != q[2]) {
    return invalid_argument(
        "{}: input 'V' must be (B,H,T,dv) = ({},{},{},dv), got {}", label, q[0],
        q[1], q[2], dims_to_string(v));
  }
  RetentionDims d{q[0], q[1], q[2], q[3], v[3]};
  if (d.dk == 0 || d.dv == 0) {
    return invalid_argument("{}: dk and dv must be positive, got dk={} dv={}",
                            label, d.dk, d.dv);
  }
  if (args.inputs.size() > kPastState && !args.inputs[kPastState].empty()) {
    std::vector<int64_t> want = {d.batch, d.heads, d.dk, d.dv};
    if (args.input_dims[kPastState] != want) {
      return invalid_argument(
          "{}: input 'past_state' must be (B,H,dk,dv) = {}, got {}", label,
          dims_to_string(want), dims_to_string(args.input_dims[kPastState]));
    }
  }
  const Attribute* chunk = args.node->attr("chunk_size");
  if (chunk != nullptr && chunk->as_int() <= 0) {
    return invalid_argument("{}: chunk_size must be positive, got {}", label,
                            chunk->as_int());
  }
  const Attribute* scale = args.node->attr("scale");
  if (scale != nullptr && !std::isfinite(scale->as_float())) {
    return invalid_argument("{}: scale must be finite, got {}", label,
                            scale->as_float());
  }
  return d;
}

// γ_h from the attribute, else OPS.md's default 1 − 2^(−5−h).
Result<std::vector<float>> gammas(const Node& node, int64_t heads) {
  std::vector<float> out;
  if (const Attribute* attr = node.attr("gammas")) {
    out = attr->as_floats();
    if (static_cast<int64_t>(out.size()) != heads) {
      return invalid_argument(
          "Retention (vulkan): gammas must have one value per head ({}), got "
          "{}",
          heads, out.size());
    }
    for (float gamma : out) {
      // γ > 1 would grow the state without bound; NaN is never a decay.
      if (!(gamma >= 0.0f && gamma <= 1.0f)) {
        return invalid_argument("{}: gammas must lie in [0, 1], got {}",
                                node.label(), gamma);
      }
    }
    return out;
  }
  for (int64_t h = 0; h < heads; ++h) {
    out.push_back(
        static_cast<float>(1.0 - std::ldexp(1.0, -5 - static_cast<int>(h))));
  }
  return out;
}

float scale_of(const Node& node, int64_t dk) {
  const Attribute* attr = node.attr("scale");
  return attr != nullptr ? attr->as_float()
                         : static_cast<float>(1.0 / std::sqrt(double(dk)));
}

Result<KernelTiling> plan(const NodeArgs& args, const DeviceLimits& limits) {
  SEQRT_ASSIGN_OR_RETURN(RetentionDims d, retention_dims(args));
  SEQRT_RETURN_IF_ERROR(gammas(*args.node, d.heads).status());
  return plan_retention_form(d.dk, d.dv, d.length, d.batch * d.heads,
                             int_attr(*args.node, "chunk_size", 64), limits);
}

// γ_h as a device buffer, one word per head.
Result<BufferSlice> decay_buffer(const NodeArgs& args, int64_t heads,
                                 Recorder& recorder) {
  SEQRT_ASSIGN_OR_RETURN(std::vector<float> decay, gammas(*args.node, heads));
  SEQRT_ASSIGN_OR_RETURN(BufferSlice slice, recorder.scratch(4 * decay.size()));
  for (size_t h = 0; h < decay.size(); ++h) {
    BufferSlice one = slice;
    one.offset += 4 * h;
    one.bytes = 4;
    SEQRT_RETURN_IF_ERROR(recorder.fill(one, float_word(decay[h])));
  }
  return slice;
}

uint32_t u32(int64_t value) { return static_cast<uint32_t>(value); }

// Three passes; the chunk states live in scratch memory, one per chunk.
Status record_chunkwise(const NodeArgs& args, const RetentionDims& d,
                        const KernelTiling& tiling, Recorder& recorder) {
  SEQRT_ASSIGN_OR_RETURN(ChunkTiling t, retention_chunk_tiling_from(tiling));
  SEQRT_ASSIGN_OR_RETURN(BufferSlice decay,
                         decay_buffer(args, d.heads, recorder));
  const int64_t bh = d.batch * d.heads;
  const int64_t chunks = (d.length + t.chunk - 1) / t.chunk;
  const int64_t state = d.dk * d.dv;
  if (bh == 0 || chunks == 0) return Status::ok();
  SEQRT_ASSIGN_OR_RETURN(
      BufferSlice states,
      recorder.scratch(4 * static_cast<VkDeviceSize>(bh * chunks * state)));
  SEQRT_ASSIGN_OR_RETURN(BufferSlice spare, recorder.scratch(4));
  const BufferSlice q = input_or_empty(args, kQ);
  const BufferSlice past = input_or_empty(args, kPastState);
  const BufferSlice present = output_or_empty(args, 1);
  uint32_t flags = past.empty() ? 0 : kHasPast;
  if (!present.empty()) flags |= kHasPresent;
  const uint32_t scale = float_word(scale_of(*args.node, d.dk));
  const uint32_t element_groups = u32((state + 63) / 64);

  Dispatch update;
  update.shader = "seq_retention_chunk_update";
  update.push_constants =
      push_bytes({u32(bh), u32(d.heads), u32(d.length), u32(d.dk), u32(d.dv),
                  t.chunk, u32(chunks), scale});
  update.reads = {input_or_empty(args, kK), input_or_empty(args, kV), decay};
  update.writes = {states};
  update.groups = {element_groups, u32(chunks), u32(bh)};
  SEQRT_RETURN_IF_ERROR(
      check_groups(update.groups, recorder.limits(), "Retention"));
  SEQRT_RETURN_IF_ERROR(recorder.dispatch(update));

  Dispatch scan;
  scan.shader = "seq_retention_chunk_scan";
  scan.push_constants =
      push_bytes({u32(bh), u32(d.heads), u32(d.length), u32(d.dk), u32(d.dv),
                  t.chunk, u32(chunks), flags});
  scan.reads = {or_stand_in(past, q), decay};
  scan.writes = {states, or_stand_in(present, spare)};
  scan.groups = {element_groups, u32(bh), 1};
  SEQRT_RETURN_IF_ERROR(
      check_groups(scan.groups, recorder.limits(), "Retention"));
  SEQRT_RETURN_IF_ERROR(recorder.dispatch(scan));

  Dispatch output;
  output.shader = "seq_retention_chunk_output";
  output.specialization = {t.invocations, t.chunk};
  output.push_constants = update.push_constants;
  output.reads = {q, input_or_empty(args, kK), input_or_empty(args, kV), decay,
                  states};
  output.writes = {or_stand_in(output_or_empty(args, 0), spare)};
  output.groups = {u32(chunks), u32(bh), 1};
  SEQRT_RETURN_IF_ERROR(
      check_groups(output.groups, recorder.limits(), "Retention"));
  return recorder.dispatch(output);
}

Status record(const NodeArgs& args, const KernelTiling& tiling,
              Recorder& recorder) {
  SEQRT_ASSIGN_OR_RETURN(RetentionDims d, retention_dims(args));
  if (is_chunkwise_retention(tiling)) {
    return record_chunkwise(args, d, tiling, recorder);
  }
  SEQRT_ASSIGN_OR_RETURN(ScanTiling t, scan_tiling_from(tiling));
  const BufferSlice q = input_or_empty(args, kQ);
  const BufferSlice past = input_or_empty(args, kPastState);
  const BufferSlice present = output_or_empty(args, 1);
  uint32_t flags = past.empty() ? 0 : kHasPast;
  if (!present.empty()) flags |= kHasPresent;

  SEQRT_ASSIGN_OR_RETURN(BufferSlice decay_slice,
                         decay_buffer(args, d.heads, recorder));
  SEQRT_ASSIGN_OR_RETURN(BufferSlice spare, recorder.scratch(4));
  SegmentedDispatch call;
  Dispatch& dispatch = call.base;
  dispatch.shader = "seq_retention";
  dispatch.specialization = scan_constants(t);
  dispatch.specialization.push_back(0);  // no store counter
  call.words = {u32(d.batch),
                u32(d.heads),
                u32(d.length),
                u32(d.dk),
                u32(d.dv),
                flags,
                float_word(scale_of(*args.node, d.dk))};
  call.flags_word = 5;
  call.has_past = kHasPast;
  call.has_present = kHasPresent;
  call.past_read = 3;
  call.present_write = 1;
  dispatch.reads = {q, input_or_empty(args, kK), input_or_empty(args, kV),
                    or_stand_in(past, q), decay_slice};
  dispatch.writes = {or_stand_in(output_or_empty(args, 0), spare),
                     or_stand_in(present, spare), spare};
  dispatch.groups = {static_cast<uint32_t>(d.dv / t.channels),
                     static_cast<uint32_t>(d.batch * d.heads), 1};
  SEQRT_RETURN_IF_ERROR(
      check_groups(dispatch.groups, recorder.limits(), "Retention"));
  return record_segments(
      call, d.length, t.segment,
      4 * static_cast<uint64_t>(d.batch * d.heads * d.dk * d.dv), recorder);
}

}  // namespace

void register_sequence_retention_kernels(KernelTable& table) {
  VulkanKernel kernel;
  kernel.domain = kSeqrtDomain;
  kernel.op = "Retention";
  kernel.supports = [](const Graph& graph, const Node& node,
                       const DeviceLimits&) {
    return require_fp32(graph, node, "Retention");
  };
  kernel.plan = plan;
  kernel.record = record;
  table.add(std::move(kernel));
}

}  // namespace seqrt::vulkan
