// Attention on Vulkan: seq_attention (tiled flash attention, split-K for
// single-query decode over long caches, then seq_attention_reduce), and
// seq_kv_concat for present_key / present_value. The same kernel serves
// seqrt::Attention and ONNX Attention (AttentionCall holds the differences).
#include "backends/vulkan/kernels/sequence_attention.h"

#include "backends/vulkan/kernels/sequence_util.h"
#include "backends/vulkan/tiling.h"

namespace seqrt::vulkan {
namespace {

enum Input { kQ, kK, kV, kMask, kPastKey, kPastValue, kLens };
// Flag bits, as sequence_common.glsl's ATTN_*.
constexpr uint32_t kCausal = 1, kSigmoid = 2, kHasMask = 4, kMaskBool = 8,
                   kPacked = 16, kHasLens = 32;
constexpr uint32_t kReduceGroup = 64, kConcatGroup = 256;
constexpr uint32_t kMaxConcatGroups = 4096;  // the shader loops past it

uint32_t u32(int64_t value) { return static_cast<uint32_t>(value); }

Status check_dtypes(const Graph& graph, const Node& node, bool onnx) {
  const char* what = onnx ? "Attention" : "seqrt::Attention";
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (node.inputs[i] == kNoValue) continue;
    const Value& value = graph.value(node.inputs[i]);
    const bool ok =
        i == kMask   ? value.dtype == DType::kF32 || value.dtype == DType::kBool
        : i == kLens ? value.dtype == DType::kI64
                     : value.dtype == DType::kF32;
    if (!ok) {
      return unsupported("{} (vulkan): only fp32 kernels, input {} '{}' is {}",
                         what, i, value.name, dtype_name(value.dtype));
    }
  }
  if (node.inputs.size() > kLens && node.inputs[kLens] != kNoValue &&
      !graph.is_constant(node.inputs[kLens])) {
    return unsupported(
        "{} (vulkan): nonpad_kv_seqlen must be a constant (the device cannot "
        "report a length outside [0, Ttot])",
        what);
  }
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    if (node.outputs[i] == kNoValue) continue;
    if (onnx && i == 3) {
      return unsupported(
          "Attention (vulkan): qk_matmul_output is not produced by the flash "
          "kernel (it never forms the score matrix)");
    }
    const Value& value = graph.value(node.outputs[i]);
    if (value.dtype != DType::kF32) {
      return unsupported("{} (vulkan): only fp32 kernels, output {} '{}' is {}",
                         what, i, value.name, dtype_name(value.dtype));
    }
  }
  return Status::ok();
}

Result<KernelTiling> plan(const NodeArgs& args, const DeviceLimits& limits,
                          bool onnx) {
  SEQRT_ASSIGN_OR_RETURN(AttentionCall c, attention_call(args, onnx));
  return plan_attention({c.head_dim, c.value_dim, c.rows_per_kv_head(), c.q_len,
                         c.total_len(), c.batch * c.kv_heads},
                        limits);
}

uint32_t flags_of(const AttentionCall& c) {
  uint32_t flags = 0;
  if (c.causal) flags |= kCausal;
  if (c.sigmoid) flags |= kSigmoid;
  if (c.has_mask) flags |= kHasMask;
  if (c.mask_is_bool) flags |= kMaskBool;
  if (c.packed) flags |= kPacked;
  if (!c.kv_lens.empty()) flags |= kHasLens;
  return flags;
}

// present = concat(past, new) on T, one dispatch.
Status record_concat(const AttentionCall& c, const BufferSlice& past,
                     const BufferSlice& fresh, const BufferSlice& present,
                     int64_t width, Recorder& recorder) {
  const int64_t count = c.batch * c.kv_heads * c.total_len() * width;
  if (present.empty() || count == 0) return Status::ok();
  Dispatch dispatch;
  dispatch.shader = "seq_kv_concat";
  dispatch.push_constants =
      push_bytes({u32(c.batch), u32(c.kv_heads), u32(c.past_len),
                  u32(c.new_len), u32(width), flags_of(c) & kPacked});
  dispatch.reads = {or_stand_in(past, fresh), fresh};
  dispatch.writes = {present};
  dispatch.groups = {
      std::min<uint32_t>(kMaxConcatGroups,
                         (count + kConcatGroup - 1) / kConcatGroup),
      1, 1};
  return recorder.dispatch(dispatch);
}

// The valid key count of each batch row as a small device buffer.
Result<BufferSlice> lens_buffer(const AttentionCall& c, Recorder& recorder) {
  SEQRT_ASSIGN_OR_RETURN(BufferSlice slice,
                         recorder.scratch(4 * c.kv_lens.size()));
  for (size_t b = 0; b < c.kv_lens.size(); ++b) {
    BufferSlice one = slice;
    one.offset += 4 * b;
    one.bytes = 4;
    SEQRT_RETURN_IF_ERROR(recorder.fill(one, u32(c.kv_lens[b])));
  }
  return slice;
}

Status record(const NodeArgs& args, const KernelTiling& tiling,
              Recorder& recorder, bool onnx) {
  SEQRT_ASSIGN_OR_RETURN(AttentionCall c, attention_call(args, onnx));
  SEQRT_ASSIGN_OR_RETURN(AttentionTiling t, attention_tiling_from(tiling));
  const std::string what = args.node->label();
  const BufferSlice q = input_or_empty(args, kQ);
  const BufferSlice past_key = input_or_empty(args, kPastKey);
  const BufferSlice past_value = input_or_empty(args, kPastValue);
  SEQRT_RETURN_IF_ERROR(record_concat(c, past_key, input_or_empty(args, kK),
                                      output_or_empty(args, 1), c.head_dim,
                                      recorder));
  SEQRT_RETURN_IF_ERROR(record_concat(c, past_value, input_or_empty(args, kV),
                                      output_or_empty(args, 2), c.value_dim,
                                      recorder));
  const int64_t rows = c.batch * c.q_heads * c.q_len;
  if (rows == 0 || c.value_dim == 0) return Status::ok();

  BufferSlice lens = q;
  if (!c.kv_lens.empty()) {
    SEQRT_ASSIGN_OR_RETURN(lens, lens_buffer(c, recorder));
  }
  const BufferSlice y = output_or_empty(args, 0);
  BufferSlice target = y;
  const bool split = t.key_splits > 1;
  if (split) {
    SEQRT_ASSIGN_OR_RETURN(
        target, recorder.scratch(4 * static_cast<VkDeviceSize>(rows) *
                                 t.key_splits * (c.value_dim + 2)));
  }
  const auto& m = c.mask_strides;
  Dispatch dispatch;
  dispatch.shader = "seq_attention";
  dispatch.specialization = {tiling.constants.begin(),
                             tiling.constants.begin() + 7};
  dispatch.specialization.push_back(split ? 1u : 0u);
  dispatch.push_constants = push_bytes({u32(c.batch),
                                        u32(c.q_heads),
                                        u32(c.kv_heads),
                                        u32(c.q_len),
                                        u32(c.new_len),
                                        u32(c.past_len),
                                        u32(c.head_dim),
                                        u32(c.value_dim),
                                        flags_of(c),
                                        float_word(c.scale),
                                        float_word(c.softcap),
                                        float_word(c.sigmoid_bias),
                                        u32(c.window_left),
                                        u32(c.window_right),
                                        u32(c.causal_shift),
                                        u32(c.mask_cols),
                                        u32(m[0]),
                                        u32(m[1]),
                                        u32(m[2]),
                                        u32(m[3]),
                                        t.keys_per_split,
                                        t.key_splits});
  dispatch.reads = {q,
                    input_or_empty(args, kK),
                    input_or_empty(args, kV),
                    or_stand_in(input_or_empty(args, kMask), q),
                    or_stand_in(past_key, q),
                    or_stand_in(past_value, q),
                    lens};
  dispatch.writes = {target};
  dispatch.groups = {u32((c.rows_per_kv_head() + t.rows - 1) / t.rows),
                     u32(c.batch * c.kv_heads), t.key_splits};
  SEQRT_RETURN_IF_ERROR(check_groups(dispatch.groups, recorder.limits(), what));
  SEQRT_RETURN_IF_ERROR(recorder.dispatch(dispatch));
  if (!split) return Status::ok();

  Dispatch reduce;
  reduce.shader = "seq_attention_reduce";
  reduce.push_constants =
      push_bytes({u32(c.batch), u32(c.q_heads), u32(c.q_len), u32(c.value_dim),
                  t.key_splits, flags_of(c)});
  reduce.reads = {target};
  reduce.writes = {y};
  reduce.groups = {u32((rows * c.value_dim + kReduceGroup - 1) / kReduceGroup),
                   1, 1};
  SEQRT_RETURN_IF_ERROR(check_groups(reduce.groups, recorder.limits(), what));
  return recorder.dispatch(reduce);
}

void add_kernel(KernelTable& table, const char* domain, bool onnx) {
  VulkanKernel kernel;
  kernel.domain = domain;
  kernel.op = "Attention";
  kernel.supports = [onnx](const Graph& graph, const Node& node,
                           const DeviceLimits&) {
    return check_dtypes(graph, node, onnx);
  };
  kernel.plan = [onnx](const NodeArgs& args, const DeviceLimits& limits) {
    return plan(args, limits, onnx);
  };
  kernel.record = [onnx](const NodeArgs& args, const KernelTiling& tiling,
                         Recorder& recorder) {
    return record(args, tiling, recorder, onnx);
  };
  table.add(std::move(kernel));
}

}  // namespace

void register_sequence_attention_kernels(KernelTable& table) {
  add_kernel(table, kSeqrtDomain, false);
  add_kernel(table, kOnnxDomain, true);
}

}  // namespace seqrt::vulkan
