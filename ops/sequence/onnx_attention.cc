// ONNX Attention (opset 23/24), with ONNX's own semantics (the ONNX node
// tests decide):
//
// Inputs Q, K, V are either 4D, Q (B,Hq,Tq,d), K (B,Hkv,Tk,d), V
// (B,Hkv,Tk,dv), or 3D with the heads packed into the last axis, Q
// (B,Tq,Hq*d), K (B,Tk,Hkv*d), V (B,Tk,Hkv*dv), and then the attributes
// q_num_heads and kv_num_heads are required. attn_mask? is bool (true =
// attend) or float (added to the logits), broadcastable to (B,Hq,Tq,L) with
// L <= Ttot; keys past L are hidden. past_key? (B,Hkv,Tp,d) and past_value?
// (B,Hkv,Tp,dv) are concatenated before K and V (Ttot = Tp + Tk).
// nonpad_kv_seqlen? (B) int64 (opset 24) hides keys j >= nonpad_kv_seqlen[b]
// and is not combined with a past cache.
//
// Outputs: Y (B,Hq,Tq,dv), or (B,Tq,Hq*dv) for 3D inputs; present_key?
// (B,Hkv,Ttot,d); present_value? (B,Hkv,Ttot,dv); qk_matmul_output?
// (B,Hq,Tq,Ttot), chosen by qk_matmul_output_mode (QkOutputMode).
//
// Logits: s = scale * q.k (scale defaults to 1/sqrt(d)), then softcap
// c*tanh(s/c) when softcap > 0, then the bias is added: the float mask (or
// -inf where a bool mask is false), -inf for causally hidden keys (query i
// sees key j iff j <= i + offset, see causal_offset), and -inf for padding.
// Y = softmax(logits) V; query head h reads kv head h / (Hq/Hkv). A row whose
// logits are all -inf gives 0 (ONNX's numpy reference gives 0/0 = NaN; we
// follow seqrt::Attention and never produce NaN from masking alone).
// softmax_precision is validated; the reference computes in fp64 anyway.
#include "ops/sequence/onnx_attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include "ops/registry.h"
#include "ops/type_support.h"

namespace seqrt {
namespace {

constexpr const char* kInputNames[] = {
    "Q", "K", "V", "attn_mask", "past_key", "past_value", "nonpad_kv_seqlen"};
constexpr double kNegInf = -std::numeric_limits<double>::infinity();

bool present(const std::vector<ValueInfo>& in, size_t i) {
  return i < in.size() && in[i].dtype != DType::kUndefined;
}
bool shaped(const std::vector<ValueInfo>& in, size_t i) {
  return present(in, i) && in[i].shape.has_value();
}

// A size that several inputs share (B, Hkv, d, ...): the first fixed value
// wins, a different fixed value later is an error naming both inputs.
class SizeVar {
 public:
  SizeVar(const char* what, Dim dim = Dim::unknown())
      : what_(what), dim_(std::move(dim)) {}

  const Dim& dim() const { return dim_; }
  Status unify(const OpContext& ctx, const Dim& other, const char* source) {
    if (other.is_fixed() && dim_.is_fixed() && other.value() != dim_.value()) {
      return ctx.error("{} mismatch: {} has {}, {} has {}", what_, source_,
                       dim_.value(), source, other.value());
    }
    if (!dim_.is_fixed() && (other.is_fixed() || dim_.is_unknown())) {
      dim_ = other;
      source_ = source;
    }
    return Status::ok();
  }

 private:
  const char* what_;
  Dim dim_;
  std::string source_ = "the attributes";
};

Dim add_dims(const Dim& a, const Dim& b) {
  if (a.is_fixed() && b.is_fixed()) return Dim(a.value() + b.value());
  if (a.is_fixed() && a.value() == 0) return b;
  if (b.is_fixed() && b.value() == 0) return a;
  return Dim::unknown();
}
Dim mul_dims(const Dim& a, const Dim& b) {
  if (a.is_fixed() && b.is_fixed()) return Dim(a.value() * b.value());
  if (a.is_fixed() && a.value() == 1) return b;
  if (b.is_fixed() && b.value() == 1) return a;
  return Dim::unknown();
}

Status check_attrs(const OpContext& ctx) {
  int64_t causal = ctx.attr_int("is_causal");
  if (causal != 0 && causal != 1) {
    return ctx.error("is_causal must be 0 or 1, got {}", causal);
  }
  int64_t mode = ctx.attr_int("qk_matmul_output_mode");
  if (mode < 0 || mode > 3) {
    return ctx.error("qk_matmul_output_mode must be 0, 1, 2 or 3, got {}",
                     mode);
  }
  float softcap = ctx.attr_float("softcap");
  if (!std::isfinite(softcap) || softcap < 0.0f) {
    return ctx.error("softcap must be a finite value >= 0 (0 = off), got {}",
                     softcap);
  }
  if (ctx.has_attr("scale") && !std::isfinite(ctx.attr_float("scale"))) {
    return ctx.error("scale must be finite, got {}", ctx.attr_float("scale"));
  }
  if (ctx.has_attr("softmax_precision")) {
    int64_t p = ctx.attr_int("softmax_precision");
    if (p != 1 && p != 10 && p != 11 && p != 16) {
      return ctx.error(
          "softmax_precision must be an ONNX float type code (1 float, 10 "
          "float16, 11 double, 16 bfloat16), got {}",
          p);
    }
  }
  for (const char* name : {"q_num_heads", "kv_num_heads"}) {
    if (ctx.has_attr(name) && ctx.attr_int(name) <= 0) {
      return ctx.error("{} must be > 0, got {}", name, ctx.attr_int(name));
    }
  }
  return Status::ok();
}

Status check_dtypes(const OpContext& ctx, const std::vector<ValueInfo>& in) {
  DType q = in[kOnnxAttnQ].dtype;
  DType v = in[kOnnxAttnV].dtype;
  SEQRT_RETURN_IF_ERROR(check_input_dtype(ctx, "input 'Q'", q, kFloatTypes));
  SEQRT_RETURN_IF_ERROR(check_input_dtype(ctx, "input 'V'", v, kFloatTypes));
  // ONNX types Q, K, past_key as T1 and V, past_value as T2.
  for (size_t i : {kOnnxAttnK, kOnnxAttnPastKey}) {
    if (!present(in, i)) continue;
    SEQRT_RETURN_IF_ERROR(check_same_dtype(
        ctx, "input 'Q'", q, std::string("input '") + kInputNames[i] + "'",
        in[i].dtype));
  }
  if (present(in, kOnnxAttnPastValue)) {
    SEQRT_RETURN_IF_ERROR(check_same_dtype(ctx, "input 'V'", v,
                                           "input 'past_value'",
                                           in[kOnnxAttnPastValue].dtype));
  }
  if (present(in, kOnnxAttnMask)) {
    SEQRT_RETURN_IF_ERROR(check_input_dtype(ctx, "input 'attn_mask'",
                                            in[kOnnxAttnMask].dtype,
                                            kFloatTypes | kBoolTypes));
  }
  if (present(in, kOnnxAttnNonpadKvSeqlen)) {
    SEQRT_RETURN_IF_ERROR(check_input_dtype(ctx, "input 'nonpad_kv_seqlen'",
                                            in[kOnnxAttnNonpadKvSeqlen].dtype,
                                            DTypeSet{DType::kI64}));
  }
  return Status::ok();
}

// The output shapes, from input shapes that may be symbolic.
struct AttentionShapes {
  std::optional<bool> packed;  // unknown while no input rank is known
  std::optional<Shape> y, present_key, present_value, qk;
};

// Whether Q/K/V are 3D (packed heads); all known ranks must agree.
Result<std::optional<bool>> layout_of(const OpContext& ctx,
                                      const std::vector<ValueInfo>& in) {
  std::optional<bool> packed;
  for (size_t i : {kOnnxAttnQ, kOnnxAttnK, kOnnxAttnV}) {
    if (!shaped(in, i)) continue;
    size_t rank = in[i].shape->rank();
    if (rank != 3 && rank != 4) {
      return ctx.error("{} must be 3D (B,T,H*d) or 4D (B,H,T,d), got {}",
                       kInputNames[i], in[i].shape->to_string());
    }
    if (packed.has_value() && *packed != (rank == 3)) {
      return ctx.error("Q, K and V must all be 3D or all 4D, got {} {}",
                       kInputNames[i], in[i].shape->to_string());
    }
    packed = rank == 3;
  }
  if (packed.value_or(false) &&
      (!ctx.has_attr("q_num_heads") || !ctx.has_attr("kv_num_heads"))) {
    return ctx.error(
        "3D inputs need the q_num_heads and kv_num_heads "
        "attributes");
  }
  return packed;
}

Status check_rank(const OpContext& ctx, const std::vector<ValueInfo>& in,
                  size_t i, size_t rank, const char* layout) {
  if (shaped(in, i) && in[i].shape->rank() != rank) {
    return ctx.error("{} must be {}, got {}", kInputNames[i], layout,
                     in[i].shape->to_string());
  }
  return Status::ok();
}

// Dim `axis` of input `i` joins `var` when the input's shape is known.
Status join(const OpContext& ctx, const std::vector<ValueInfo>& in, size_t i,
            size_t axis, SizeVar& var) {
  if (!shaped(in, i)) return Status::ok();
  return var.unify(ctx, (*in[i].shape)[axis], kInputNames[i]);
}

// A packed axis (H*width) of input `i`: when both it and the head count are
// fixed, it must divide, and the quotient joins `width`.
Status join_packed(const OpContext& ctx, const std::vector<ValueInfo>& in,
                   size_t i, const SizeVar& heads, SizeVar& width) {
  if (!shaped(in, i)) return Status::ok();
  const Dim& hidden = (*in[i].shape)[2];
  if (!hidden.is_fixed() || !heads.dim().is_fixed()) return Status::ok();
  int64_t h = heads.dim().value();
  if (hidden.value() % h != 0) {
    return ctx.error("{} hidden size {} is not a multiple of its {} heads",
                     kInputNames[i], hidden.value(), h);
  }
  return width.unify(ctx, Dim(hidden.value() / h), kInputNames[i]);
}

Status check_mask(const OpContext& ctx, const Shape& mask,
                  const std::vector<Dim>& target) {
  if (mask.rank() < 1 || mask.rank() > 4) {
    return ctx.error(
        "attn_mask must have rank 1 to 4 (broadcastable to "
        "(B,Hq,Tq,Ttot)), got {}",
        mask.to_string());
  }
  size_t offset = 4 - mask.rank();
  for (size_t a = 0; a + 1 < mask.rank(); ++a) {
    const Dim& m = mask[a];
    const Dim& t = target[offset + a];
    if (m.is_fixed() && m.value() != 1 && t.is_fixed() &&
        m.value() != t.value()) {
      return ctx.error("attn_mask {} does not broadcast to (B,Hq,Tq,Ttot) = {}",
                       mask.to_string(), Shape(target).to_string());
    }
  }
  const Dim& last = mask[mask.rank() - 1];
  if (last.is_fixed() && target[3].is_fixed() &&
      last.value() > target[3].value()) {
    return ctx.error("attn_mask covers {} keys, more than Ttot = {}",
                     last.value(), target[3].value());
  }
  return Status::ok();
}

Result<AttentionShapes> check_attention(const OpContext& ctx,
                                        std::vector<ValueInfo> in) {
  in.resize(7);
  SEQRT_RETURN_IF_ERROR(check_attrs(ctx));
  SEQRT_RETURN_IF_ERROR(check_dtypes(ctx, in));
  bool has_past = present(in, kOnnxAttnPastKey);
  if (has_past != present(in, kOnnxAttnPastValue)) {
    return ctx.error("past_key and past_value must be given together");
  }
  if (has_past && present(in, kOnnxAttnNonpadKvSeqlen)) {
    return ctx.error(
        "nonpad_kv_seqlen describes a fixed-capacity cache and "
        "cannot be combined with past_key/past_value");
  }
  AttentionShapes out;
  SEQRT_ASSIGN_OR_RETURN(out.packed, layout_of(ctx, in));
  SEQRT_RETURN_IF_ERROR(
      check_rank(ctx, in, kOnnxAttnPastKey, 4, "(B,Hkv,Tp,d)"));
  SEQRT_RETURN_IF_ERROR(
      check_rank(ctx, in, kOnnxAttnPastValue, 4, "(B,Hkv,Tp,dv)"));
  SEQRT_RETURN_IF_ERROR(check_rank(ctx, in, kOnnxAttnNonpadKvSeqlen, 1, "(B)"));

  SizeVar batch("batch size B"), hq("query heads Hq"), hkv("kv heads Hkv");
  SizeVar tq("query length Tq"), tk("new key length Tk");
  SizeVar tp("past length Tp", has_past ? Dim() : Dim(0));
  SizeVar d("head size d"), dv("value head size dv");
  if (ctx.has_attr("q_num_heads")) {
    SEQRT_RETURN_IF_ERROR(
        hq.unify(ctx, Dim(ctx.attr_int("q_num_heads")), "q_num_heads"));
  }
  if (ctx.has_attr("kv_num_heads")) {
    SEQRT_RETURN_IF_ERROR(
        hkv.unify(ctx, Dim(ctx.attr_int("kv_num_heads")), "kv_num_heads"));
  }
  for (size_t i : {kOnnxAttnQ, kOnnxAttnK, kOnnxAttnV, kOnnxAttnPastKey,
                   kOnnxAttnPastValue, kOnnxAttnNonpadKvSeqlen}) {
    SEQRT_RETURN_IF_ERROR(join(ctx, in, i, 0, batch));
  }
  bool packed = out.packed.value_or(false);
  if (packed) {
    SEQRT_RETURN_IF_ERROR(join(ctx, in, kOnnxAttnQ, 1, tq));
    SEQRT_RETURN_IF_ERROR(join(ctx, in, kOnnxAttnK, 1, tk));
    SEQRT_RETURN_IF_ERROR(join(ctx, in, kOnnxAttnV, 1, tk));
    SEQRT_RETURN_IF_ERROR(join_packed(ctx, in, kOnnxAttnQ, hq, d));
    SEQRT_RETURN_IF_ERROR(join_packed(ctx, in, kOnnxAttnK, hkv, d));
    SEQRT_RETURN_IF_ERROR(join_packed(ctx, in, kOnnxAttnV, hkv, dv));
  } else if (out.packed.has_value()) {
    SEQRT_RETURN_IF_ERROR(join(ctx, in, kOnnxAttnQ, 1, hq));
    SEQRT_RETURN_IF_ERROR(join(ctx, in, kOnnxAttnQ, 2, tq));
    SEQRT_RETURN_IF_ERROR(join(ctx, in, kOnnxAttnQ, 3, d));
    for (size_t i : {kOnnxAttnK, kOnnxAttnV}) {
      SEQRT_RETURN_IF_ERROR(join(ctx, in, i, 1, hkv));
      SEQRT_RETURN_IF_ERROR(join(ctx, in, i, 2, tk));
    }
    SEQRT_RETURN_IF_ERROR(join(ctx, in, kOnnxAttnK, 3, d));
    SEQRT_RETURN_IF_ERROR(join(ctx, in, kOnnxAttnV, 3, dv));
  }
  for (size_t i : {kOnnxAttnPastKey, kOnnxAttnPastValue}) {
    SEQRT_RETURN_IF_ERROR(join(ctx, in, i, 1, hkv));
    SEQRT_RETURN_IF_ERROR(join(ctx, in, i, 2, tp));
  }
  SEQRT_RETURN_IF_ERROR(join(ctx, in, kOnnxAttnPastKey, 3, d));
  SEQRT_RETURN_IF_ERROR(join(ctx, in, kOnnxAttnPastValue, 3, dv));
  for (const SizeVar* v : {&hq, &hkv, &d, &dv}) {
    if (v->dim().is_fixed() && v->dim().value() == 0) {
      return ctx.error("head counts and head sizes must be > 0");
    }
  }
  if (hq.dim().is_fixed() && hkv.dim().is_fixed() &&
      hq.dim().value() % hkv.dim().value() != 0) {
    return ctx.error(
        "query heads Hq = {} must be a multiple of kv heads "
        "Hkv = {}",
        hq.dim().value(), hkv.dim().value());
  }

  Dim total = add_dims(tp.dim(), tk.dim());
  if (shaped(in, kOnnxAttnMask)) {
    SEQRT_RETURN_IF_ERROR(check_mask(ctx, *in[kOnnxAttnMask].shape,
                                     {batch.dim(), hq.dim(), tq.dim(), total}));
  }
  out.present_key = Shape{batch.dim(), hkv.dim(), total, d.dim()};
  out.present_value = Shape{batch.dim(), hkv.dim(), total, dv.dim()};
  out.qk = Shape{batch.dim(), hq.dim(), tq.dim(), total};
  if (packed) {
    out.y = Shape{batch.dim(), tq.dim(), mul_dims(hq.dim(), dv.dim())};
  } else if (out.packed.has_value()) {
    out.y = Shape{batch.dim(), hq.dim(), tq.dim(), dv.dim()};
  }
  return out;
}

Status infer_onnx_attention(InferContext& ctx) {
  std::vector<ValueInfo> in;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) in.push_back(ctx.input(i));
  SEQRT_ASSIGN_OR_RETURN(AttentionShapes shapes, check_attention(ctx, in));
  DType q = ctx.input_dtype(kOnnxAttnQ);
  ctx.set_output(kOnnxAttnY, q, shapes.y);
  if (ctx.num_outputs() > kOnnxAttnPresentKey) {
    ctx.set_output(kOnnxAttnPresentKey, q, shapes.present_key);
  }
  if (ctx.num_outputs() > kOnnxAttnPresentValue) {
    ctx.set_output(kOnnxAttnPresentValue, ctx.input_dtype(kOnnxAttnV),
                   shapes.present_value);
  }
  if (ctx.num_outputs() > kOnnxAttnQkMatmul) {
    ctx.set_output(kOnnxAttnQkMatmul, q, shapes.qk);
  }
  return Status::ok();
}

// Keys (or values) of one call as (B,Hkv,Ttot,width) doubles:
// concat(past, new) on the time axis, read through the input's layout.
std::vector<double> gather_cache(const OnnxAttentionSpec& s, const Tensor* past,
                                 const Tensor& fresh, int64_t width) {
  int64_t stride[3];
  s.kv_strides(width, stride);
  std::vector<double> out(
      static_cast<size_t>(s.batch * s.kv_heads * s.total_len * width));
  size_t e = 0;
  for (int64_t b = 0; b < s.batch; ++b) {
    for (int64_t h = 0; h < s.kv_heads; ++h) {
      for (int64_t t = 0; t < s.total_len; ++t) {
        for (int64_t c = 0; c < width; ++c, ++e) {
          if (t < s.past_len) {
            out[e] = past->element_f64(
                ((b * s.kv_heads + h) * s.past_len + t) * width + c);
          } else {
            out[e] = fresh.element_f64(b * stride[0] + h * stride[1] +
                                       (t - s.past_len) * stride[2] + c);
          }
        }
      }
    }
  }
  return out;
}

// Broadcast strides of the mask against (B,Hq,Tq,L).
void mask_strides(const std::vector<int64_t>& dims, int64_t out[4]) {
  size_t offset = 4 - dims.size();
  int64_t stride = 1;
  for (int a = 3; a >= 0; --a) {
    out[a] = 0;
    if (static_cast<size_t>(a) < offset) continue;
    int64_t n = dims[static_cast<size_t>(a) - offset];
    out[a] = n == 1 ? 0 : stride;
    stride *= n;
  }
}

// One query row's logits after softcap and bias, and the raw/softcapped
// products for qk_matmul_output.
struct RowLogits {
  std::vector<double> product, capped, biased;
};

double bias_of(const OnnxAttentionSpec& s, const Tensor* mask,
               const int64_t mstride[4], int64_t b, int64_t h, int64_t i,
               int64_t j) {
  if (s.causal && j > i + s.causal_offset(b)) return kNegInf;
  if (j >= s.valid_len(b)) return kNegInf;
  if (mask == nullptr) return 0.0;
  if (j >= s.mask_dims.back()) return kNegInf;
  double m = mask->element_f64(b * mstride[0] + h * mstride[1] +
                               i * mstride[2] + j * mstride[3]);
  if (s.mask_is_bool) return m != 0.0 ? 0.0 : kNegInf;
  return m;
}

// Softmax in place; a row with no finite logit becomes all zeros.
void softmax_row(std::vector<double>& row) {
  double top = kNegInf;
  for (double x : row) top = std::max(top, x);
  if (top == kNegInf) {
    std::fill(row.begin(), row.end(), 0.0);
    return;
  }
  double sum = 0.0;
  for (double& x : row) {
    x = std::exp(x - top);
    sum += x;
  }
  for (double& x : row) x /= sum;
}

// What one call reads, with the present caches gathered as
// (B,Hkv,Ttot,width) doubles.
struct AttentionData {
  const Tensor* q = nullptr;
  const Tensor* mask = nullptr;
  int64_t q_stride[3] = {0, 0, 0};
  int64_t mask_stride[4] = {0, 0, 0, 0};
  std::vector<double> keys, values;
};

// Logits of query i of head h against every key, after softcap and bias;
// `qk` (if wanted, and not the softmax) gets the stage its mode names.
void score_row(const OnnxAttentionSpec& s, const AttentionData& d, int64_t b,
               int64_t h, int64_t i, Tensor* qk, std::vector<double>& row) {
  int64_t group = s.q_heads / s.kv_heads;
  int64_t kv_base = (b * s.kv_heads + h / group) * s.total_len;
  int64_t q_at = b * d.q_stride[0] + h * d.q_stride[1] + i * d.q_stride[2];
  int64_t qk_at = ((b * s.q_heads + h) * s.q_len + i) * s.total_len;
  for (int64_t j = 0; j < s.total_len; ++j) {
    const double* key =
        &d.keys[static_cast<size_t>((kv_base + j) * s.head_dim)];
    double dot = 0.0;
    for (int64_t c = 0; c < s.head_dim; ++c) {
      dot += d.q->element_f64(q_at + c) * key[c];
    }
    double product = s.scale * dot;
    double capped =
        s.softcap > 0.0 ? s.softcap * std::tanh(product / s.softcap) : product;
    double biased = capped + bias_of(s, d.mask, d.mask_stride, b, h, i, j);
    row[static_cast<size_t>(j)] = biased;
    if (qk != nullptr && s.qk_mode != QkOutputMode::kSoftmax) {
      double shown = s.qk_mode == QkOutputMode::kScaledProduct ? product
                     : s.qk_mode == QkOutputMode::kSoftcapped  ? capped
                                                               : biased;
      qk->set_element_f64(qk_at + j, shown);
    }
  }
}

// Y row (b, h, i) = weights . values.
void write_output(const OnnxAttentionSpec& s, const AttentionData& d, int64_t b,
                  int64_t h, int64_t i, const std::vector<double>& weights,
                  Tensor& y) {
  int64_t ys[3];
  s.y_strides(ys);
  int64_t kv_base =
      (b * s.kv_heads + h / (s.q_heads / s.kv_heads)) * s.total_len;
  for (int64_t c = 0; c < s.value_dim; ++c) {
    double sum = 0.0;
    for (int64_t j = 0; j < s.total_len; ++j) {
      sum += weights[static_cast<size_t>(j)] *
             d.values[static_cast<size_t>((kv_base + j) * s.value_dim + c)];
    }
    y.set_element_f64(b * ys[0] + h * ys[1] + i * ys[2] + c, sum);
  }
}

Status write_presents(KernelContext& ctx, const OnnxAttentionSpec& s,
                      const AttentionData& d) {
  for (size_t index : {kOnnxAttnPresentKey, kOnnxAttnPresentValue}) {
    if (!onnx_attention_wants_output(ctx, index)) continue;
    bool is_key = index == kOnnxAttnPresentKey;
    const std::vector<double>& data = is_key ? d.keys : d.values;
    DType dtype = ctx.input(is_key ? kOnnxAttnQ : kOnnxAttnV)->dtype();
    SEQRT_ASSIGN_OR_RETURN(
        Tensor * out, ctx.allocate_output(index, dtype,
                                          {s.batch, s.kv_heads, s.total_len,
                                           is_key ? s.head_dim : s.value_dim}));
    for (size_t e = 0; e < data.size(); ++e) {
      out->set_element_f64(static_cast<int64_t>(e), data[e]);
    }
  }
  return Status::ok();
}

Status run_onnx_attention(KernelContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(OnnxAttentionSpec s, onnx_attention_spec(ctx));
  AttentionData d;
  d.q = ctx.input(kOnnxAttnQ);
  d.mask = ctx.input(kOnnxAttnMask);
  s.q_strides(d.q_stride);
  if (s.has_mask) mask_strides(s.mask_dims, d.mask_stride);
  d.keys = gather_cache(s, ctx.input(kOnnxAttnPastKey), *ctx.input(kOnnxAttnK),
                        s.head_dim);
  d.values = gather_cache(s, ctx.input(kOnnxAttnPastValue),
                          *ctx.input(kOnnxAttnV), s.value_dim);
  DType dtype = d.q->dtype();
  SEQRT_ASSIGN_OR_RETURN(Tensor * y,
                         ctx.allocate_output(kOnnxAttnY, dtype, s.y_dims()));
  Tensor* qk = nullptr;
  if (onnx_attention_wants_output(ctx, kOnnxAttnQkMatmul)) {
    SEQRT_ASSIGN_OR_RETURN(
        qk, ctx.allocate_output(kOnnxAttnQkMatmul, dtype,
                                {s.batch, s.q_heads, s.q_len, s.total_len}));
  }
  std::vector<double> row(static_cast<size_t>(s.total_len));
  for (int64_t b = 0; b < s.batch; ++b) {
    for (int64_t h = 0; h < s.q_heads; ++h) {
      for (int64_t i = 0; i < s.q_len; ++i) {
        score_row(s, d, b, h, i, qk, row);
        softmax_row(row);
        if (qk != nullptr && s.qk_mode == QkOutputMode::kSoftmax) {
          int64_t at = ((b * s.q_heads + h) * s.q_len + i) * s.total_len;
          for (int64_t j = 0; j < s.total_len; ++j) {
            qk->set_element_f64(at + j, row[static_cast<size_t>(j)]);
          }
        }
        write_output(s, d, b, h, i, row, *y);
      }
    }
  }
  return write_presents(ctx, s, d);
}

}  // namespace

void OnnxAttentionSpec::q_strides(int64_t out[3]) const {
  int64_t row = packed ? q_heads * head_dim : head_dim;
  out[0] = q_len * q_heads * head_dim;
  out[1] = packed ? head_dim : q_len * head_dim;
  out[2] = row;
}

void OnnxAttentionSpec::kv_strides(int64_t width, int64_t out[3]) const {
  out[0] = new_len * kv_heads * width;
  out[1] = packed ? width : new_len * width;
  out[2] = packed ? kv_heads * width : width;
}

void OnnxAttentionSpec::y_strides(int64_t out[3]) const {
  out[0] = q_len * q_heads * value_dim;
  out[1] = packed ? value_dim : q_len * value_dim;
  out[2] = packed ? q_heads * value_dim : value_dim;
}

std::vector<int64_t> OnnxAttentionSpec::y_dims() const {
  if (packed) return {batch, q_len, q_heads * value_dim};
  return {batch, q_heads, q_len, value_dim};
}

int64_t OnnxAttentionSpec::causal_offset(int64_t b) const {
  if (past_len > 0) return past_len;
  if (!kv_lens.empty()) return kv_lens[static_cast<size_t>(b)] - q_len;
  return 0;
}

int64_t OnnxAttentionSpec::valid_len(int64_t b) const {
  return kv_lens.empty() ? total_len : kv_lens[static_cast<size_t>(b)];
}

bool onnx_attention_wants_output(const KernelContext& ctx, size_t i) {
  return i < ctx.num_outputs() && i < ctx.node().outputs.size() &&
         ctx.node().outputs[i] != kNoValue;
}

Result<OnnxAttentionSpec> onnx_attention_spec(const KernelContext& ctx) {
  std::vector<ValueInfo> in;
  for (size_t i = 0; i < 7; ++i) {
    const Tensor* t = ctx.input(i);
    in.push_back(t == nullptr ? ValueInfo{}
                              : ValueInfo{t->dtype(), t->shape(), nullptr});
  }
  SEQRT_ASSIGN_OR_RETURN(AttentionShapes shapes, check_attention(ctx, in));
  OnnxAttentionSpec s;
  s.packed = *shapes.packed;
  std::vector<int64_t> pk = shapes.present_key->fixed_dims();
  std::vector<int64_t> qk = shapes.qk->fixed_dims();
  s.batch = pk[0];
  s.kv_heads = pk[1];
  s.total_len = pk[2];
  s.head_dim = pk[3];
  s.value_dim = shapes.present_value->fixed_dims()[3];
  s.q_heads = qk[1];
  s.q_len = qk[2];
  const Tensor* past = ctx.input(kOnnxAttnPastKey);
  s.past_len = past == nullptr ? 0 : past->dim(2);
  s.new_len = s.total_len - s.past_len;
  s.scale = ctx.has_attr("scale")
                ? ctx.attr_float("scale")
                : 1.0 / std::sqrt(static_cast<double>(s.head_dim));
  s.softcap = ctx.attr_float("softcap");
  s.causal = ctx.attr_int("is_causal") == 1;
  s.qk_mode = static_cast<QkOutputMode>(ctx.attr_int("qk_matmul_output_mode"));
  if (const Tensor* mask = ctx.input(kOnnxAttnMask)) {
    s.has_mask = true;
    s.mask_is_bool = mask->dtype() == DType::kBool;
    s.mask_dims = mask->dims();
  }
  if (const Tensor* lens = ctx.input(kOnnxAttnNonpadKvSeqlen)) {
    for (int64_t b = 0; b < s.batch; ++b) {
      int64_t len = lens->element_i64(b);
      if (len < 0 || len > s.total_len) {
        return ctx.error("nonpad_kv_seqlen[{}] = {} is outside [0, Ttot = {}]",
                         b, len, s.total_len);
      }
      s.kv_lens.push_back(len);
    }
  }
  return s;
}

void register_onnx_attention(OpRegistry& registry) {
  OpSchema s;
  s.domain = kOnnxDomain;
  s.name = "Attention";
  s.doc = "ONNX scaled dot-product attention (MHA/GQA, mask, KV cache)";
  s.inputs = {{"Q"},
              {"K"},
              {"V"},
              {"attn_mask", true},
              {"past_key", true},
              {"past_value", true},
              {"nonpad_kv_seqlen", true}};
  s.outputs = {{"Y"},
               {"present_key", true},
               {"present_value", true},
               {"qk_matmul_output", true}};
  s.attrs = {
      AttrSpec{"is_causal", AttrType::kInt, Attribute(int64_t{0}), false, {}},
      AttrSpec{"kv_num_heads", AttrType::kInt, std::nullopt, false, {}},
      AttrSpec{"q_num_heads", AttrType::kInt, std::nullopt, false, {}},
      AttrSpec{"qk_matmul_output_mode",
               AttrType::kInt,
               Attribute(int64_t{0}),
               false,
               {}},
      AttrSpec{"scale", AttrType::kFloat, std::nullopt, false, {}},
      AttrSpec{"softcap", AttrType::kFloat, Attribute(0.0f), false, {}},
      AttrSpec{"softmax_precision", AttrType::kInt, std::nullopt, false, {}},
  };
  s.infer = infer_onnx_attention;
  s.reference = run_onnx_attention;
  register_or_die(registry, std::move(s));
}

}  // namespace seqrt
