// The sizes and attributes of one Attention node on Vulkan
// (sequence_attention.h), checked on dims only: the tensors live on the
// device. seqrt::Attention and ONNX Attention differ in layout (ONNX may
// pack heads, (B,T,H*d)), causal alignment (ONNX aligns top-left without a
// cache) and the mask's key axis (ONNX hides keys past its length).
#include <cmath>

#include "backends/vulkan/kernels/sequence_attention.h"
#include "backends/vulkan/kernels/sequence_util.h"
#include "ops/sequence/attention.h"
#include "ops/sequence/onnx_attention.h"

namespace seqrt::vulkan {
namespace {

// Both ops take their inputs in one order (ops/sequence/attention.h,
// onnx_attention.h); the asserts keep the shared reader honest.
constexpr size_t kQ = kAttnQ, kK = kAttnK, kV = kAttnV, kMask = kAttnMask,
                 kPastKey = kAttnPastKey, kPastValue = kAttnPastValue,
                 kLens = kAttnNonpadKvSeqlen;
static_assert(kOnnxAttnQ == kQ && kOnnxAttnK == kK && kOnnxAttnV == kV &&
                  kOnnxAttnMask == kMask && kOnnxAttnPastKey == kPastKey &&
                  kOnnxAttnPastValue == kPastValue &&
                  kOnnxAttnNonpadKvSeqlen == kLens,
              "seqrt and ONNX Attention share an input order");

bool has_input(const NodeArgs& args, size_t i) {
  return i < args.input_dims.size() && i < args.input_dtypes.size() &&
         args.input_dtypes[i] != DType::kUndefined;
}

const std::vector<int64_t>& dims(const NodeArgs& args, size_t i) {
  return args.input_dims[i];
}

Status check_rank(const NodeArgs& args, size_t i, size_t rank, const char* name,
                  const char* layout) {
  if (has_input(args, i) && dims(args, i).size() != rank) {
    return invalid_argument("{}: input '{}' must be {}, got {}",
                            args.node->label(), name, layout,
                            dims_to_string(dims(args, i)));
  }
  return Status::ok();
}

// Heads from the ONNX attribute `name` for 3D inputs, dividing `hidden`.
Result<int64_t> packed_heads(const NodeArgs& args, const char* name,
                             int64_t hidden) {
  const int64_t heads = int_attr(*args.node, name, 0);
  if (heads <= 0 || hidden % heads != 0) {
    return invalid_argument(
        "{}: 3D inputs need attribute {} >= 1 dividing the hidden size {}, "
        "got {}",
        args.node->label(), name, hidden, heads);
  }
  return heads;
}

Status read_sizes(const NodeArgs& args, AttentionCall& c) {
  const std::string label = args.node->label();
  const std::vector<int64_t>& q = dims(args, kQ);
  const std::vector<int64_t>& k = dims(args, kK);
  const std::vector<int64_t>& v = dims(args, kV);
  if (c.onnx && q.size() == 3) {
    c.packed = true;
    SEQRT_RETURN_IF_ERROR(check_rank(args, kK, 3, "K", "(B,Tk,Hkv*d)"));
    SEQRT_RETURN_IF_ERROR(check_rank(args, kV, 3, "V", "(B,Tk,Hkv*dv)"));
    SEQRT_ASSIGN_OR_RETURN(c.q_heads, packed_heads(args, "q_num_heads", q[2]));
    SEQRT_ASSIGN_OR_RETURN(c.kv_heads,
                           packed_heads(args, "kv_num_heads", k[2]));
    if (v[2] % c.kv_heads != 0) {
      return invalid_argument(
          "{}: V's last axis {} is not kv_num_heads {} x dv", label, v[2],
          c.kv_heads);
    }
    c.batch = q[0];
    c.q_len = q[1];
    c.head_dim = q[2] / c.q_heads;
    c.new_len = k[1];
    c.value_dim = v[2] / c.kv_heads;
    if (k[2] / c.kv_heads != c.head_dim || v[1] != k[1] || k[0] != q[0] ||
        v[0] != q[0]) {
      return invalid_argument(
          "{}: Q {}, K {}, V {} do not agree on B, Tk and d", label,
          dims_to_string(q), dims_to_string(k), dims_to_string(v));
    }
  } else {
    SEQRT_RETURN_IF_ERROR(check_rank(args, kQ, 4, "Q", "(B,Hq,Tq,d)"));
    SEQRT_RETURN_IF_ERROR(check_rank(args, kK, 4, "K", "(B,Hkv,Tk,d)"));
    SEQRT_RETURN_IF_ERROR(check_rank(args, kV, 4, "V", "(B,Hkv,Tk,dv)"));
    c.batch = q[0];
    c.q_heads = q[1];
    c.q_len = q[2];
    c.head_dim = q[3];
    c.kv_heads = k[1];
    c.new_len = k[2];
    c.value_dim = v[3];
    if (k[0] != c.batch || v[0] != c.batch || k[3] != c.head_dim ||
        v[1] != c.kv_heads || v[2] != c.new_len) {
      return invalid_argument(
          "{}: Q {}, K {}, V {} do not agree on B, Hkv, Tk and d", label,
          dims_to_string(q), dims_to_string(k), dims_to_string(v));
    }
  }
  if (c.kv_heads <= 0 || c.q_heads % c.kv_heads != 0) {
    return invalid_argument(
        "{}: query heads Hq = {} must be a multiple of kv heads Hkv = {}",
        label, c.q_heads, c.kv_heads);
  }
  if (has_input(args, kPastKey) != has_input(args, kPastValue)) {
    return invalid_argument(
        "{}: past_key and past_value must be given together", label);
  }
  if (has_input(args, kPastKey)) {
    SEQRT_RETURN_IF_ERROR(
        check_rank(args, kPastKey, 4, "past_key", "(B,Hkv,Tp,d)"));
    const std::vector<int64_t>& pk = dims(args, kPastKey);
    c.past_len = pk[2];
    const std::vector<int64_t> want_k = {c.batch, c.kv_heads, c.past_len,
                                         c.head_dim};
    const std::vector<int64_t> want_v = {c.batch, c.kv_heads, c.past_len,
                                         c.value_dim};
    if (pk != want_k || dims(args, kPastValue) != want_v) {
      return invalid_argument(
          "{}: past_key {} and past_value {} must be {} and {}", label,
          dims_to_string(pk), dims_to_string(dims(args, kPastValue)),
          dims_to_string(want_k), dims_to_string(want_v));
    }
  }
  return Status::ok();
}

Status read_mask(const NodeArgs& args, AttentionCall& c) {
  if (!has_input(args, kMask)) return Status::ok();
  const std::vector<int64_t>& m = dims(args, kMask);
  const int64_t keys = c.onnx && !m.empty() ? m.back() : c.total_len();
  const std::vector<int64_t> target = {c.batch, c.q_heads, c.q_len, keys};
  if (m.size() > 4 || (c.onnx && (m.empty() || keys > c.total_len()))) {
    return invalid_argument(
        "{}: attn_mask {} must have rank <= 4 and broadcast to "
        "(B,Hq,Tq,Ttot = {})",
        args.node->label(), dims_to_string(m), c.total_len());
  }
  const size_t offset = 4 - m.size();
  int64_t stride = 1;
  for (size_t a = 4; a-- > offset;) {
    const int64_t n = m[a - offset];
    if (n != 1 && n != target[a]) {
      return invalid_argument(
          "{}: attn_mask {} does not broadcast to (B,Hq,Tq,Ttot) = {}",
          args.node->label(), dims_to_string(m), dims_to_string(target));
    }
    c.mask_strides[a] = n == 1 ? 0 : stride;
    stride *= n;
  }
  c.has_mask = true;
  c.mask_is_bool = args.input_dtypes[kMask] == DType::kBool;
  c.mask_cols = keys;
  return Status::ok();
}

// nonpad_kv_seqlen's values: the device cannot report a bad length, so the
// input must be a constant, checked here like the reference kernel does.
Status read_lens(const NodeArgs& args, AttentionCall& c) {
  if (!has_input(args, kLens)) return Status::ok();
  const std::string label = args.node->label();
  if (c.onnx && c.past_len > 0) {
    return invalid_argument(
        "{}: nonpad_kv_seqlen cannot be combined with past_key/past_value",
        label);
  }
  const ValueId id = args.node->inputs[kLens];
  if (args.graph == nullptr || !args.graph->is_constant(id)) {
    return unsupported(
        "{}: nonpad_kv_seqlen must be a constant on vulkan (its values are "
        "checked when the plan is recorded)",
        label);
  }
  const Tensor& lens = args.graph->constants.at(id);
  if (lens.num_elements() != c.batch) {
    return invalid_argument("{}: nonpad_kv_seqlen must be (B) = ({}), got {}",
                            label, c.batch, dims_to_string(lens.dims()));
  }
  for (int64_t b = 0; b < c.batch; ++b) {
    const int64_t len = lens.element_i64(b);
    if (len < 0 || len > c.total_len()) {
      return invalid_argument(
          "{}: nonpad_kv_seqlen[{}] = {} is outside [0, Ttot = {}]", label, b,
          len, c.total_len());
    }
    c.kv_lens.push_back(len);
  }
  return Status::ok();
}

// seqrt::Attention's attributes are the op's (ops/sequence/attention.h);
// ONNX Attention reads its own.
Status read_attrs(const NodeArgs& args, AttentionCall& c) {
  const Node& node = *args.node;
  const std::string label = node.label();
  if (!c.onnx) {
    SEQRT_ASSIGN_OR_RETURN(AttentionAttrs a, AttentionAttrs::from(node));
    c.causal = a.causal;
    c.scale = a.scale_for(c.head_dim);
    c.softcap = a.softcap;
    c.sigmoid = a.sigmoid;
    c.sigmoid_bias = a.sigmoid_bias;
    c.window_left = a.window_left;
    c.window_right = a.window_right;
    return Status::ok();
  }
  c.causal = int_attr(node, "is_causal", 0) != 0;
  const Attribute* scale = node.attr("scale");
  c.scale =
      scale != nullptr
          ? scale->as_float()
          : static_cast<float>(1.0 / std::sqrt(static_cast<double>(
                                         std::max<int64_t>(c.head_dim, 1))));
  const Attribute* softcap = node.attr("softcap");
  c.softcap = softcap != nullptr ? softcap->as_float() : 0.0f;
  if (!std::isfinite(c.scale) || !(c.softcap >= 0.0f) ||
      !std::isfinite(c.softcap)) {
    return invalid_argument(
        "{}: scale ({}) must be finite and softcap ({}) "
        "finite and >= 0",
        label, c.scale, c.softcap);
  }
  // ONNX aligns the causal mask top-left unless a cache gives the offset
  // (Tp, or nonpad_kv_seqlen[b] - Tq): the shader's positions are
  // bottom-right, moved by this shift.
  c.causal_shift = has_input(args, kLens) ? 0 : c.q_len - c.new_len;
  return Status::ok();
}

}  // namespace

Result<AttentionCall> attention_call(const NodeArgs& args, bool onnx) {
  if (args.input_dims.size() < 3 || args.input_dtypes.size() < 3) {
    return invalid_argument("{}: needs inputs Q, K and V", args.node->label());
  }
  AttentionCall c;
  c.onnx = onnx;
  if (!onnx || dims(args, kQ).size() != 3) {
    SEQRT_RETURN_IF_ERROR(check_rank(args, kQ, 4, "Q", "(B,Hq,Tq,d)"));
  }
  SEQRT_RETURN_IF_ERROR(read_sizes(args, c));
  SEQRT_RETURN_IF_ERROR(read_mask(args, c));
  SEQRT_RETURN_IF_ERROR(read_lens(args, c));
  SEQRT_RETURN_IF_ERROR(read_attrs(args, c));
  return c;
}

}  // namespace seqrt::vulkan
