// ONNX LinearAttention (opset 27) on Vulkan: the recurrent form (shader
// seq_linear_attention, one dispatch over every (batch, kv head) and value
// column) for the rules linear, gated, delta and gated_delta; the chunked
// form of linear and gated (three passes, below); the delta rules in
// chunks in sequence_linear_attention_delta.cc.
#include <cmath>

#include "backends/vulkan/kernels/sequence_linear_attention.h"
#include "backends/vulkan/kernels/sequence_util.h"
#include "backends/vulkan/tiling.h"

namespace seqrt::vulkan {
namespace {

constexpr size_t kQuery = kLaQuery, kKey = kLaKey, kValue = kLaValue,
                 kPast = kLaPast, kDecay = kLaDecay, kBeta = kLaBeta;
constexpr uint32_t kUseDecay = kLaUseDecay, kDecayPerKey = kLaDecayPerKey,
                   kUseBeta = kLaUseBeta, kBetaPerHead = kLaBetaPerHead,
                   kHasPast = kLaHasPast, kHasPresent = kLaHasPresent;

bool present_input(const NodeArgs& args, size_t i) {
  return i < args.inputs.size() && !args.inputs[i].empty();
}

// The gates the rule reads: decay (B,T,H_kv*d_k) or (B,T,H_kv), beta
// (B,T,H_kv) or (B,T,1). Gates it does not read are ignored, like ONNX.
Status read_gates(const NodeArgs& args, const std::string& rule,
                  LinearDims& d) {
  const std::string label = args.node->label();
  const bool uses_decay = rule == "gated" || rule == "gated_delta";
  const bool uses_beta = rule == "delta" || rule == "gated_delta";
  d.gate_flags = 0;
  if (uses_decay) {
    if (!present_input(args, kDecay)) {
      return invalid_argument("{}: update_rule '{}' needs input 'decay'", label,
                              rule);
    }
    const std::vector<int64_t>& g = args.input_dims[kDecay];
    if (g.size() != 3 || g[0] != d.batch || g[1] != d.seq ||
        (g[2] != d.kv_heads * d.dk && g[2] != d.kv_heads)) {
      return invalid_argument(
          "{}: input 'decay' must be (B,T,H_kv*d_k) = ({},{},{}) or "
          "(B,T,H_kv), got {}",
          label, d.batch, d.seq, d.kv_heads * d.dk, dims_to_string(g));
    }
    d.gate_flags |= kUseDecay;
    if (g[2] == d.kv_heads * d.dk && g[2] != d.kv_heads) {
      d.gate_flags |= kDecayPerKey;
    }
  }
  if (uses_beta) {
    if (!present_input(args, kBeta)) {
      return invalid_argument("{}: update_rule '{}' needs input 'beta'", label,
                              rule);
    }
    const std::vector<int64_t>& b = args.input_dims[kBeta];
    if (b.size() != 3 || b[0] != d.batch || b[1] != d.seq ||
        (b[2] != d.kv_heads && b[2] != 1)) {
      return invalid_argument(
          "{}: input 'beta' must be (B,T,H_kv) = ({},{},{}) or (B,T,1), got {}",
          label, d.batch, d.seq, d.kv_heads, dims_to_string(b));
    }
    d.gate_flags |= kUseBeta;
    if (b[2] == d.kv_heads) d.gate_flags |= kBetaPerHead;
  }
  return Status::ok();
}

// The reference kernel's checks (check_linear_attention), on dims.
Result<LinearDims> linear_dims(const NodeArgs& args) {
  const std::string label = args.node->label();
  LinearDims d{};
  d.q_heads = int_attr(*args.node, "q_num_heads", 0);
  d.kv_heads = int_attr(*args.node, "kv_num_heads", 0);
  if (d.q_heads <= 0 || d.kv_heads <= 0 || d.q_heads % d.kv_heads != 0) {
    return invalid_argument(
        "{}: q_num_heads ({}) must be a positive multiple of kv_num_heads ({})",
        label, d.q_heads, d.kv_heads);
  }
  SEQRT_ASSIGN_OR_RETURN(auto q, dims_of(args, kQuery, 3, label));
  SEQRT_ASSIGN_OR_RETURN(auto k, dims_of(args, kKey, 3, label));
  SEQRT_ASSIGN_OR_RETURN(auto v, dims_of(args, kValue, 3, label));
  d.batch = q[0];
  d.seq = q[1];
  if (q[2] == 0 || q[2] % d.q_heads != 0) {
    return invalid_argument(
        "{}: input 'query' last dim ({}) must be q_num_heads ({}) * d_k", label,
        q[2], d.q_heads);
  }
  d.dk = q[2] / d.q_heads;
  if (k != std::vector<int64_t>{d.batch, d.seq, d.kv_heads * d.dk}) {
    return invalid_argument(
        "{}: input 'key' must be (B,T,H_kv*d_k) = ({},{},{}), got {}", label,
        d.batch, d.seq, d.kv_heads * d.dk, dims_to_string(k));
  }
  if (v[0] != d.batch || v[1] != d.seq || v[2] == 0 || v[2] % d.kv_heads != 0) {
    return invalid_argument(
        "{}: input 'value' must be (B,T,H_kv*d_v) = ({},{},{}*d_v), got {}",
        label, d.batch, d.seq, d.kv_heads, dims_to_string(v));
  }
  d.dv = v[2] / d.kv_heads;
  if (present_input(args, kPast) &&
      args.input_dims[kPast] !=
          std::vector<int64_t>{d.batch, d.kv_heads, d.dk, d.dv}) {
    return invalid_argument(
        "{}: input 'past_state' must be (B,H_kv,d_k,d_v) = ({},{},{},{}), got "
        "{}",
        label, d.batch, d.kv_heads, d.dk, d.dv,
        dims_to_string(args.input_dims[kPast]));
  }
  const std::string rule =
      string_attr(*args.node, "update_rule", "gated_delta");
  SEQRT_RETURN_IF_ERROR(read_gates(args, rule, d));
  const Attribute* scale = args.node->attr("scale");
  const float s = scale != nullptr ? scale->as_float() : 0.0f;
  if (!std::isfinite(s)) {
    return invalid_argument("{}: scale must be finite, got {}", label, s);
  }
  d.scale = s != 0.0f ? s : static_cast<float>(1.0 / std::sqrt(double(d.dk)));
  if (int_attr(*args.node, "chunk_size", 64) <= 0) {
    return invalid_argument("{}: chunk_size must be positive, got {}", label,
                            int_attr(*args.node, "chunk_size", 64));
  }
  return d;
}

Result<KernelTiling> plan(const NodeArgs& args, const DeviceLimits& limits) {
  SEQRT_ASSIGN_OR_RETURN(LinearDims d, linear_dims(args));
  if (auto delta = plan_linear_attention_delta_chunked(
          d, int_attr(*args.node, "chunk_size", 64), limits)) {
    return *delta;
  }
  return plan_linear_attention_form(d.dk, d.dv, d.seq, d.q_heads / d.kv_heads,
                                    d.batch * d.kv_heads,
                                    int_attr(*args.node, "chunk_size", 64),
                                    (d.gate_flags & kUseBeta) != 0, limits);
}

uint32_t u32(int64_t value) { return static_cast<uint32_t>(value); }

// The chunked form (rules without β): three passes, the chunk states in
// scratch memory, one per chunk.
Status record_chunked(const NodeArgs& args, const LinearDims& d, uint32_t flags,
                      const BufferSlice& decay, const KernelTiling& tiling,
                      Recorder& recorder) {
  const uint32_t chunk = tiling.constants[1];
  const int64_t bg = d.batch * d.kv_heads;
  const int64_t chunks = (d.seq + chunk - 1) / chunk;
  const int64_t state = d.dk * d.dv;
  if (chunks == 0) return Status::ok();
  SEQRT_ASSIGN_OR_RETURN(
      BufferSlice states,
      recorder.scratch(4 * static_cast<VkDeviceSize>(bg * chunks * state)));
  SEQRT_ASSIGN_OR_RETURN(
      BufferSlice decays,
      recorder.scratch(4 * static_cast<VkDeviceSize>(bg * chunks * d.dk)));
  SEQRT_ASSIGN_OR_RETURN(BufferSlice spare, recorder.scratch(4));
  const BufferSlice q = input_or_empty(args, kQuery);
  const BufferSlice k = input_or_empty(args, kKey);
  const BufferSlice v = input_or_empty(args, kValue);
  const std::vector<uint8_t> words = push_bytes(
      {u32(d.batch), u32(d.seq), u32(d.q_heads), u32(d.kv_heads), u32(d.dk),
       u32(d.dv), flags, float_word(d.scale), chunk, u32(chunks)});
  const uint32_t element_groups = u32((state + 63) / 64);
  const std::string what = "LinearAttention";

  Dispatch update;
  update.shader = "seq_linear_attention_chunk_update";
  update.push_constants = words;
  update.reads = {k, v, or_stand_in(decay, q)};
  update.writes = {states, decays};
  update.groups = {element_groups, u32(chunks), u32(bg)};
  SEQRT_RETURN_IF_ERROR(check_groups(update.groups, recorder.limits(), what));
  SEQRT_RETURN_IF_ERROR(recorder.dispatch(update));

  Dispatch scan;
  scan.shader = "seq_linear_attention_chunk_scan";
  scan.push_constants = words;
  scan.reads = {or_stand_in(input_or_empty(args, kPast), q), decays};
  scan.writes = {states, or_stand_in(output_or_empty(args, 1), spare)};
  scan.groups = {element_groups, u32(bg), 1};
  SEQRT_RETURN_IF_ERROR(check_groups(scan.groups, recorder.limits(), what));
  SEQRT_RETURN_IF_ERROR(recorder.dispatch(scan));

  Dispatch output;
  output.shader = "seq_linear_attention_chunk_output";
  output.specialization = {tiling.constants[0], chunk, tiling.constants[2]};
  output.push_constants = words;
  output.reads = {q, k, v, or_stand_in(decay, q), states};
  output.writes = {or_stand_in(output_or_empty(args, 0), spare)};
  output.groups = {u32(chunks), u32(bg), 1};
  SEQRT_RETURN_IF_ERROR(check_groups(output.groups, recorder.limits(), what));
  return recorder.dispatch(output);
}

Status record(const NodeArgs& args, const KernelTiling& tiling,
              Recorder& recorder) {
  SEQRT_ASSIGN_OR_RETURN(LinearDims d, linear_dims(args));
  if (d.batch == 0) return Status::ok();
  const BufferSlice q = input_or_empty(args, kQuery);
  const BufferSlice past = input_or_empty(args, kPast);
  const BufferSlice present = output_or_empty(args, 1);
  uint32_t flags = d.gate_flags;
  if (!past.empty()) flags |= kHasPast;
  if (!present.empty()) flags |= kHasPresent;
  const BufferSlice decay =
      (flags & kUseDecay) != 0 ? input_or_empty(args, kDecay) : BufferSlice{};
  const BufferSlice beta =
      (flags & kUseBeta) != 0 ? input_or_empty(args, kBeta) : BufferSlice{};
  if (is_delta_chunked_linear_attention(tiling)) {
    return record_linear_attention_delta_chunked(args, d, flags, tiling,
                                                 recorder);
  }
  if (is_chunked_linear_attention(tiling)) {
    return record_chunked(args, d, flags, decay, tiling, recorder);
  }
  SEQRT_ASSIGN_OR_RETURN(LinearAttentionTiling t,
                         linear_attention_tiling_from(tiling));
  SEQRT_ASSIGN_OR_RETURN(BufferSlice spare, recorder.scratch(4));
  SegmentedDispatch call;
  Dispatch& dispatch = call.base;
  dispatch.shader = "seq_linear_attention";
  dispatch.specialization = {tiling.constants.begin(),
                             tiling.constants.begin() + 8};
  call.words = {static_cast<uint32_t>(d.batch),
                static_cast<uint32_t>(d.seq),
                static_cast<uint32_t>(d.q_heads),
                static_cast<uint32_t>(d.kv_heads),
                static_cast<uint32_t>(d.dk),
                static_cast<uint32_t>(d.dv),
                flags,
                float_word(d.scale)};
  call.flags_word = 6;
  call.has_past = kHasPast;
  call.has_present = kHasPresent;
  call.past_read = kPast;
  call.present_write = 1;
  dispatch.reads = {q,
                    input_or_empty(args, kKey),
                    input_or_empty(args, kValue),
                    or_stand_in(past, q),
                    or_stand_in(decay, q),
                    or_stand_in(beta, q)};
  dispatch.writes = {or_stand_in(output_or_empty(args, 0), spare),
                     or_stand_in(present, spare)};
  dispatch.groups = {static_cast<uint32_t>(d.dv / t.columns),
                     static_cast<uint32_t>(d.batch * d.kv_heads), 1};
  SEQRT_RETURN_IF_ERROR(
      check_groups(dispatch.groups, recorder.limits(), "LinearAttention"));
  return record_segments(
      call, d.seq, t.segment,
      4 * static_cast<uint64_t>(d.batch * d.kv_heads * d.dk * d.dv), recorder);
}

}  // namespace

void register_sequence_linear_attention_kernels(KernelTable& table) {
  VulkanKernel kernel;
  kernel.domain = kOnnxDomain;
  kernel.op = "LinearAttention";
  kernel.supports = [](const Graph& graph, const Node& node,
                       const DeviceLimits&) {
    return require_fp32(graph, node, "LinearAttention");
  };
  kernel.plan = plan;
  kernel.record = record;
  table.add(std::move(kernel));
}

}  // namespace seqrt::vulkan
