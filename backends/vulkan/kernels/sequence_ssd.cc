// seqrt::SSD (Mamba-2) on Vulkan. Recurrent form (shader seq_ssd): one
// dispatch over every (batch, head) and head column, for steps and short
// prompts. Chunked form for long prompts (seq_ssd_chunk_update, _scan,
// _output): the state is stored once per chunk and the chunks' outputs run
// in parallel.
#include <cmath>
#include <limits>

#include "backends/vulkan/kernels/sequence_util.h"
#include "backends/vulkan/tiling.h"

namespace seqrt::vulkan {
namespace {

enum Input { kX, kDt, kA, kB, kC, kD, kZ, kDtBias, kPastState };
constexpr uint32_t kHasPast = 1, kHasPresent = 2, kHasSkip = 4, kHasZ = 8,
                   kHasBias = 16, kSoftplus = 32;

struct SsdCall {
  int64_t batch, length, heads, head_dim, groups, states;
  float dt_min, dt_max;
};

bool given(const NodeArgs& args, size_t i) {
  return i < args.inputs.size() && !args.inputs[i].empty();
}

// The reference kernel's checks (ssd.cc), on dims.
Result<SsdCall> ssd_call(const NodeArgs& args) {
  const std::string label = args.node->label();
  SEQRT_ASSIGN_OR_RETURN(auto x, dims_of(args, kX, 4, label));
  SEQRT_ASSIGN_OR_RETURN(auto bm, dims_of(args, kB, 4, label));
  SsdCall c{x[0], x[1], x[2], x[3], bm[2], bm[3], 0.0f, 0.0f};
  auto expect = [&](size_t i, const char* name,
                    std::vector<int64_t> want) -> Status {
    if (!given(args, i) || args.input_dims[i] == want) return Status::ok();
    return invalid_argument("{}: input '{}' must be {}, got {}", label, name,
                            dims_to_string(want),
                            dims_to_string(args.input_dims[i]));
  };
  SEQRT_RETURN_IF_ERROR(expect(kDt, "dt", {c.batch, c.length, c.heads}));
  SEQRT_RETURN_IF_ERROR(expect(kA, "A", {c.heads}));
  SEQRT_RETURN_IF_ERROR(
      expect(kB, "Bm", {c.batch, c.length, c.groups, c.states}));
  SEQRT_RETURN_IF_ERROR(
      expect(kC, "Cm", {c.batch, c.length, c.groups, c.states}));
  SEQRT_RETURN_IF_ERROR(expect(kD, "D", {c.heads}));
  SEQRT_RETURN_IF_ERROR(expect(kZ, "z", x));
  SEQRT_RETURN_IF_ERROR(expect(kDtBias, "dt_bias", {c.heads}));
  SEQRT_RETURN_IF_ERROR(expect(kPastState, "past_state",
                               {c.batch, c.heads, c.head_dim, c.states}));
  if (!given(args, kDt) || !given(args, kA) || !given(args, kC)) {
    return invalid_argument("{}: inputs x, dt, A, Bm and Cm are required",
                            label);
  }
  if (c.groups <= 0 || c.heads % c.groups != 0) {
    return invalid_argument("{}: H = {} must be a multiple of G = {}", label,
                            c.heads, c.groups);
  }
  const Attribute* lo = args.node->attr("dt_min");
  const Attribute* hi = args.node->attr("dt_max");
  c.dt_min = lo != nullptr ? lo->as_float() : 0.0f;
  c.dt_max =
      hi != nullptr ? hi->as_float() : std::numeric_limits<float>::infinity();
  if (std::isnan(c.dt_min) || std::isnan(c.dt_max) || c.dt_min > c.dt_max) {
    return invalid_argument("{}: dt_min ({}) must not exceed dt_max ({})",
                            label, c.dt_min, c.dt_max);
  }
  if (int_attr(*args.node, "chunk_size", 256) < 1) {
    return invalid_argument("{}: chunk_size must be at least 1, got {}", label,
                            int_attr(*args.node, "chunk_size", 256));
  }
  return c;
}

Result<KernelTiling> plan(const NodeArgs& args, const DeviceLimits& limits) {
  SEQRT_ASSIGN_OR_RETURN(SsdCall c, ssd_call(args));
  return plan_ssd_form(c.head_dim, c.states, c.length, c.batch * c.heads,
                       int_attr(*args.node, "chunk_size", 256), limits);
}

uint32_t u32(int64_t value) { return static_cast<uint32_t>(value); }

// Three passes; the chunk states live in scratch memory, one per chunk.
Status record_chunked(const NodeArgs& args, const SsdCall& c, uint32_t flags,
                      const KernelTiling& tiling, Recorder& recorder) {
  SEQRT_ASSIGN_OR_RETURN(ChunkTiling t, retention_chunk_tiling_from(tiling));
  const int64_t bh = c.batch * c.heads;
  const int64_t chunks = (c.length + t.chunk - 1) / t.chunk;
  const int64_t state = c.head_dim * c.states;
  if (chunks == 0) return Status::ok();
  SEQRT_ASSIGN_OR_RETURN(
      BufferSlice states,
      recorder.scratch(4 * static_cast<VkDeviceSize>(bh * chunks * state)));
  SEQRT_ASSIGN_OR_RETURN(
      BufferSlice decays,
      recorder.scratch(4 * static_cast<VkDeviceSize>(bh * chunks)));
  SEQRT_ASSIGN_OR_RETURN(BufferSlice spare, recorder.scratch(4));
  const BufferSlice x = input_or_empty(args, kX);
  auto in = [&](size_t i) { return or_stand_in(input_or_empty(args, i), x); };
  const std::vector<uint8_t> words =
      push_bytes({u32(c.batch), u32(c.length), u32(c.heads), u32(c.head_dim),
                  u32(c.states), u32(c.groups), flags, float_word(c.dt_min),
                  float_word(c.dt_max), t.chunk, u32(chunks)});
  const uint32_t element_groups = u32((state + 63) / 64);

  Dispatch update;
  update.shader = "seq_ssd_chunk_update";
  update.push_constants = words;
  update.reads = {x, in(kDt), in(kA), in(kB), in(kDtBias)};
  update.writes = {states, decays};
  update.groups = {element_groups, u32(chunks), u32(bh)};
  SEQRT_RETURN_IF_ERROR(check_groups(update.groups, recorder.limits(), "SSD"));
  SEQRT_RETURN_IF_ERROR(recorder.dispatch(update));

  Dispatch scan;
  scan.shader = "seq_ssd_chunk_scan";
  scan.push_constants = words;
  scan.reads = {in(kPastState), decays};
  scan.writes = {states, or_stand_in(output_or_empty(args, 1), spare)};
  scan.groups = {element_groups, u32(bh), 1};
  SEQRT_RETURN_IF_ERROR(check_groups(scan.groups, recorder.limits(), "SSD"));
  SEQRT_RETURN_IF_ERROR(recorder.dispatch(scan));

  Dispatch output;
  output.shader = "seq_ssd_chunk_output";
  output.specialization = {t.invocations, t.chunk};
  output.push_constants = words;
  for (size_t i = kX; i < kPastState; ++i) output.reads.push_back(in(i));
  output.reads.push_back(states);
  output.writes = {or_stand_in(output_or_empty(args, 0), spare)};
  output.groups = {u32(chunks), u32(bh), 1};
  SEQRT_RETURN_IF_ERROR(check_groups(output.groups, recorder.limits(), "SSD"));
  return recorder.dispatch(output);
}

Status record(const NodeArgs& args, const KernelTiling& tiling,
              Recorder& recorder) {
  SEQRT_ASSIGN_OR_RETURN(SsdCall c, ssd_call(args));
  if (c.batch * c.heads == 0 || c.head_dim == 0) return Status::ok();
  const BufferSlice x = input_or_empty(args, kX);
  const BufferSlice present = output_or_empty(args, 1);
  uint32_t flags = 0;
  if (given(args, kPastState)) flags |= kHasPast;
  if (!present.empty()) flags |= kHasPresent;
  if (given(args, kD)) flags |= kHasSkip;
  if (given(args, kZ)) flags |= kHasZ;
  if (given(args, kDtBias)) flags |= kHasBias;
  if (int_attr(*args.node, "dt_softplus", 1) != 0) flags |= kSoftplus;
  if (is_chunked_ssd(tiling)) {
    return record_chunked(args, c, flags, tiling, recorder);
  }
  SEQRT_ASSIGN_OR_RETURN(ScanTiling t, scan_tiling_from(tiling));
  SEQRT_ASSIGN_OR_RETURN(BufferSlice spare, recorder.scratch(4));
  SegmentedDispatch call;
  Dispatch& dispatch = call.base;
  dispatch.shader = "seq_ssd";
  dispatch.specialization = scan_constants(t);
  call.words = {static_cast<uint32_t>(c.batch),
                static_cast<uint32_t>(c.length),
                static_cast<uint32_t>(c.heads),
                static_cast<uint32_t>(c.head_dim),
                static_cast<uint32_t>(c.states),
                static_cast<uint32_t>(c.groups),
                flags,
                float_word(c.dt_min),
                float_word(c.dt_max)};
  call.flags_word = 6;
  call.has_past = kHasPast;
  call.has_present = kHasPresent;
  call.past_read = kPastState;
  call.present_write = 1;
  for (size_t i = kX; i <= kPastState; ++i) {
    dispatch.reads.push_back(or_stand_in(input_or_empty(args, i), x));
  }
  dispatch.writes = {or_stand_in(output_or_empty(args, 0), spare),
                     or_stand_in(present, spare)};
  dispatch.groups = {static_cast<uint32_t>(c.head_dim / t.channels),
                     static_cast<uint32_t>(c.batch * c.heads), 1};
  SEQRT_RETURN_IF_ERROR(
      check_groups(dispatch.groups, recorder.limits(), "SSD"));
  return record_segments(
      call, c.length, t.segment,
      4 * static_cast<uint64_t>(c.batch * c.heads * c.head_dim * c.states),
      recorder);
}

}  // namespace

void register_sequence_ssd_kernels(KernelTable& table) {
  VulkanKernel kernel;
  kernel.domain = kSeqrtDomain;
  kernel.op = "SSD";
  kernel.supports = [](const Graph& graph, const Node& node,
                       const DeviceLimits&) {
    return require_fp32(graph, node, "SSD");
  };
  kernel.plan = plan;
  kernel.record = record;
  table.add(std::move(kernel));
}

}  // namespace seqrt::vulkan
