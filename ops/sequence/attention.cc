// seqrt::Attention (OPS.md "Attention"): scaled dot-product attention with
// softmax or sigmoid scores, GQA, causal and sliding-window masks, softcap,
// an optional bool/float mask, a KV cache passed as past_key/past_value, and
// a fixed-capacity KV cache described by nonpad_kv_seqlen.
//
// Inputs: Q (B,Hq,Tq,d), K (B,Hkv,Tk,d), V (B,Hkv,Tk,dv), attn_mask?
// (bool: true = attend, or float added to the logits; broadcastable to
// (B,Hq,Tq,Ttot)), past_key? (B,Hkv,Tp,d), past_value? (B,Hkv,Tp,dv),
// nonpad_kv_seqlen? (B) int64. Outputs: Y (B,Hq,Tq,dv), present_key?
// (B,Hkv,Ttot,d), present_value? (B,Hkv,Ttot,dv), present = concat(past,
// new) on the T axis; Ttot = Tp + Tk. Query head h reads kv head
// h / (Hq/Hkv).
//
// nonpad_kv_seqlen (same name and position as ONNX Attention-24) describes a
// fixed-capacity KV cache: the keys (after concatenation with past_key, if
// given) have capacity Ttot, and only the first len_b = nonpad_kv_seqlen[b]
// positions of batch b are valid (the cache already holds the new tokens,
// written by a separate TensorScatter). Keys at positions >= len_b are
// invisible, and queries are bottom-right aligned to the valid length:
// p_i = len_b - Tq + i. Without it len_b = Ttot (OPS.md's p_i = Ttot-Tq+i).
//
// Key j of query i is visible iff j < len_b, the mask allows it (bool true;
// a float mask value of -inf hides it), and, if is_causal, j <= p_i, and
// p_i - j <= window_left (if >= 0), j - p_i <= window_right (if >= 0).
// Logits s_ij = scale * q_i.k_j, then softcap (c*tanh(s/c), c > 0), then the
// float mask is added. softmax: Y_i = sum_j softmax_j(s_ij) v_j over the
// visible j; sigmoid: Y_i = sum_j sigmoid(s_ij + sigmoid_bias) v_j. A row
// with no visible key is 0 in both modes, never NaN.
#include "ops/sequence/attention.h"

#include <cmath>
#include <limits>
#include <string>

#include "ops/registry.h"
#include "ops/sequence/scan_common.h"
#include "ops/type_support.h"
#include "ops/util.h"

namespace seqrt {
namespace {

constexpr const char* kInputNames[] = {
    "Q", "K", "V", "attn_mask", "past_key", "past_value", "nonpad_kv_seqlen"};

// One named size (B, Hkv, d, ...) seen in several inputs: the first fixed
// size wins, a different fixed size later is an error naming both inputs.
struct SizeVar {
  const char* what;
  Dim dim;
  std::string source;

  Status unify(const OpContext& ctx, const Dim& other,
               const std::string& other_source) {
    if (other.is_fixed() && dim.is_fixed() && other.value() != dim.value()) {
      return ctx.error("{} mismatch: {} has {}, {} has {}", what, source,
                       dim.value(), other_source, other.value());
    }
    if (!dim.is_fixed() && (other.is_fixed() || dim.is_unknown())) {
      dim = other;
      source = other_source;
    }
    return Status::ok();
  }
};

// The shapes of the outputs, from inputs whose shapes may be symbolic.
struct AttentionShapes {
  std::optional<Shape> y, present_key, present_value;
};

Status check_dtypes(const OpContext& ctx, const std::vector<ValueInfo>& in) {
  DType q = in[kAttnQ].dtype;
  SEQRT_RETURN_IF_ERROR(check_input_dtype(ctx, "input 'Q'", q, kFloatTypes));
  for (size_t i : {kAttnK, kAttnV, kAttnPastKey, kAttnPastValue}) {
    if (in[i].dtype == DType::kUndefined) continue;
    SEQRT_RETURN_IF_ERROR(check_same_dtype(
        ctx, "input 'Q'", q, std::string("input '") + kInputNames[i] + "'",
        in[i].dtype));
  }
  if (in[kAttnMask].dtype != DType::kUndefined) {
    SEQRT_RETURN_IF_ERROR(check_input_dtype(ctx, "input 'attn_mask'",
                                            in[kAttnMask].dtype,
                                            kFloatTypes | kBoolTypes));
  }
  if (in[kAttnNonpadKvSeqlen].dtype != DType::kUndefined) {
    SEQRT_RETURN_IF_ERROR(check_input_dtype(ctx, "input 'nonpad_kv_seqlen'",
                                            in[kAttnNonpadKvSeqlen].dtype,
                                            DTypeSet{DType::kI64}));
  }
  return Status::ok();
}

Status check_rank(const OpContext& ctx, const std::vector<ValueInfo>& in,
                  size_t i, size_t rank, const char* layout) {
  const std::optional<Shape>& shape = in[i].shape;
  if (in[i].dtype == DType::kUndefined || !shape) return Status::ok();
  if (shape->rank() != rank) {
    return ctx.error("{} must be {}, got {}", kInputNames[i], layout,
                     shape->to_string());
  }
  return Status::ok();
}

// The dim `axis` of input `i` joins `var`, when the input and its rank are
// known.
Status join(const OpContext& ctx, const std::vector<ValueInfo>& in, size_t i,
            size_t axis, SizeVar& var) {
  if (in[i].dtype == DType::kUndefined || !in[i].shape) return Status::ok();
  return var.unify(ctx, (*in[i].shape)[axis], kInputNames[i]);
}

Dim sum_dims(const Dim& a, const Dim& b) {
  if (a.is_fixed() && b.is_fixed()) return Dim(a.value() + b.value());
  if (a.is_fixed() && a.value() == 0) return b;
  if (b.is_fixed() && b.value() == 0) return a;
  return Dim::unknown();
}

Status check_mask(const OpContext& ctx, const Shape& mask,
                  const std::vector<Dim>& target) {
  if (mask.rank() > 4) {
    return ctx.error(
        "attn_mask must have rank <= 4 (broadcastable to (B,Hq,Tq,Ttot)), "
        "got {}",
        mask.to_string());
  }
  size_t offset = 4 - mask.rank();
  for (size_t a = 0; a < mask.rank(); ++a) {
    const Dim& m = mask[a];
    const Dim& t = target[offset + a];
    if (m.is_fixed() && m.value() != 1 && t.is_fixed() &&
        m.value() != t.value()) {
      Shape want(target);
      return ctx.error(
          "attn_mask {} is not broadcastable to (B,Hq,Tq,Ttot) "
          "= {}",
          mask.to_string(), want.to_string());
    }
  }
  return Status::ok();
}

Result<AttentionShapes> check_attention(const OpContext& ctx,
                                        std::vector<ValueInfo> in) {
  in.resize(7);
  SEQRT_RETURN_IF_ERROR(AttentionAttrs::from(ctx.node()).status());
  SEQRT_RETURN_IF_ERROR(check_dtypes(ctx, in));
  bool has_pk = in[kAttnPastKey].dtype != DType::kUndefined;
  bool has_pv = in[kAttnPastValue].dtype != DType::kUndefined;
  if (has_pk != has_pv) {
    return ctx.error("past_key and past_value must be given together");
  }
  SEQRT_RETURN_IF_ERROR(check_rank(ctx, in, kAttnQ, 4, "(B,Hq,Tq,d)"));
  SEQRT_RETURN_IF_ERROR(check_rank(ctx, in, kAttnK, 4, "(B,Hkv,Tk,d)"));
  SEQRT_RETURN_IF_ERROR(check_rank(ctx, in, kAttnV, 4, "(B,Hkv,Tk,dv)"));
  SEQRT_RETURN_IF_ERROR(check_rank(ctx, in, kAttnPastKey, 4, "(B,Hkv,Tp,d)"));
  SEQRT_RETURN_IF_ERROR(
      check_rank(ctx, in, kAttnPastValue, 4, "(B,Hkv,Tp,dv)"));
  SEQRT_RETURN_IF_ERROR(check_rank(ctx, in, kAttnNonpadKvSeqlen, 1, "(B)"));

  SizeVar batch{"batch size B", Dim(), ""};
  SizeVar hq{"query heads Hq", Dim(), ""};
  SizeVar hkv{"kv heads Hkv", Dim(), ""};
  SizeVar tq{"query length Tq", Dim(), ""};
  SizeVar tk{"new key length Tk", Dim(), ""};
  SizeVar tp{"past length Tp", has_pk ? Dim() : Dim(0), ""};
  SizeVar d{"head size d", Dim(), ""};
  SizeVar dv{"value head size dv", Dim(), ""};
  for (size_t i : {kAttnQ, kAttnK, kAttnV, kAttnPastKey, kAttnPastValue,
                   kAttnNonpadKvSeqlen}) {
    SEQRT_RETURN_IF_ERROR(join(ctx, in, i, 0, batch));
  }
  SEQRT_RETURN_IF_ERROR(join(ctx, in, kAttnQ, 1, hq));
  SEQRT_RETURN_IF_ERROR(join(ctx, in, kAttnQ, 2, tq));
  SEQRT_RETURN_IF_ERROR(join(ctx, in, kAttnQ, 3, d));
  for (size_t i : {kAttnK, kAttnV, kAttnPastKey, kAttnPastValue}) {
    SEQRT_RETURN_IF_ERROR(join(ctx, in, i, 1, hkv));
  }
  SEQRT_RETURN_IF_ERROR(join(ctx, in, kAttnK, 2, tk));
  SEQRT_RETURN_IF_ERROR(join(ctx, in, kAttnV, 2, tk));
  SEQRT_RETURN_IF_ERROR(join(ctx, in, kAttnPastKey, 2, tp));
  SEQRT_RETURN_IF_ERROR(join(ctx, in, kAttnPastValue, 2, tp));
  SEQRT_RETURN_IF_ERROR(join(ctx, in, kAttnK, 3, d));
  SEQRT_RETURN_IF_ERROR(join(ctx, in, kAttnPastKey, 3, d));
  SEQRT_RETURN_IF_ERROR(join(ctx, in, kAttnV, 3, dv));
  SEQRT_RETURN_IF_ERROR(join(ctx, in, kAttnPastValue, 3, dv));

  if (hq.dim.is_fixed() && hkv.dim.is_fixed()) {
    if (hkv.dim.value() == 0 || hq.dim.value() % hkv.dim.value() != 0) {
      return ctx.error(
          "query heads Hq = {} must be a multiple of kv heads "
          "Hkv = {}",
          hq.dim.value(), hkv.dim.value());
    }
  }
  Dim total = sum_dims(tp.dim, tk.dim);
  if (in[kAttnMask].dtype != DType::kUndefined && in[kAttnMask].shape) {
    SEQRT_RETURN_IF_ERROR(check_mask(ctx, *in[kAttnMask].shape,
                                     {batch.dim, hq.dim, tq.dim, total}));
  }
  AttentionShapes out;
  out.y = Shape{batch.dim, hq.dim, tq.dim, dv.dim};
  out.present_key = Shape{batch.dim, hkv.dim, total, d.dim};
  out.present_value = Shape{batch.dim, hkv.dim, total, dv.dim};
  return out;
}

Status infer_attention(InferContext& ctx) {
  std::vector<ValueInfo> in;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    in.push_back(ctx.has_input(i) ? ctx.input(i) : ValueInfo{});
  }
  SEQRT_ASSIGN_OR_RETURN(AttentionShapes shapes, check_attention(ctx, in));
  DType dtype = ctx.input_dtype(kAttnQ);
  ctx.set_output(kAttnY, dtype, shapes.y);
  if (ctx.num_outputs() > kAttnPresentKey) {
    ctx.set_output(kAttnPresentKey, dtype, shapes.present_key);
  }
  if (ctx.num_outputs() > kAttnPresentValue) {
    ctx.set_output(kAttnPresentValue, dtype, shapes.present_value);
  }
  return Status::ok();
}

// ---- reference kernel ------------------------------------------------------

// concat(past, new) on the T axis of (B,H,T,width) tensors, as doubles.
std::vector<double> concat_keys(const AttentionSpec& s, const Tensor* past,
                                const Tensor& fresh, int64_t width) {
  std::vector<double> p = to_f64(past);
  std::vector<double> f = to_f64(&fresh);
  std::vector<double> out;
  out.reserve(p.size() + f.size());
  for (int64_t bh = 0; bh < s.batch * s.kv_heads; ++bh) {
    auto p0 = p.begin() + bh * s.past_len * width;
    out.insert(out.end(), p0, p0 + s.past_len * width);
    auto f0 = f.begin() + bh * s.new_len * width;
    out.insert(out.end(), f0, f0 + s.new_len * width);
  }
  return out;
}

// [lo, hi): the keys that causality and the windows leave to position p,
// within the valid length.
std::pair<int64_t, int64_t> band(const AttentionSpec& s, int64_t p,
                                 int64_t len) {
  int64_t lo = 0, hi = len;
  if (s.causal) hi = std::min(hi, p + 1);
  if (s.window_left >= 0) lo = std::max(lo, p - s.window_left);
  if (s.window_right >= 0) hi = std::min(hi, p + s.window_right + 1);
  return {lo, std::max(lo, hi)};
}

double sigmoid(double x) {
  // exp(-x) overflows to inf for x << 0, giving 0, never NaN.
  return 1.0 / (1.0 + std::exp(-x));
}

// One query row: y (dv values) from the row's logits over keys [0, len).
void attend_row(const AttentionSpec& s, const std::vector<double>& logits,
                const std::vector<bool>& visible, const double* values,
                double* y) {
  const double kNegInf = -std::numeric_limits<double>::infinity();
  double shift = kNegInf;
  if (!s.sigmoid) {
    for (size_t j = 0; j < logits.size(); ++j) {
      if (visible[j]) shift = std::max(shift, logits[j]);
    }
    if (shift == kNegInf) return;  // no visible key: the row stays 0
  }
  double sum = 0.0;
  for (size_t j = 0; j < logits.size(); ++j) {
    if (!visible[j]) continue;
    double w = s.sigmoid ? sigmoid(logits[j] + s.sigmoid_bias)
                         : std::exp(logits[j] - shift);
    sum += w;
    const double* v = values + static_cast<int64_t>(j) * s.value_dim;
    for (int64_t c = 0; c < s.value_dim; ++c) y[c] += w * v[c];
  }
  if (!s.sigmoid) {
    for (int64_t c = 0; c < s.value_dim; ++c) y[c] /= sum;
  }
}

Status run_attention(KernelContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(AttentionSpec s, attention_spec(ctx));
  const Tensor& q_tensor = *ctx.input(kAttnQ);
  std::vector<double> q = to_f64(&q_tensor);
  std::vector<double> keys =
      concat_keys(s, ctx.input(kAttnPastKey), *ctx.input(kAttnK), s.head_dim);
  std::vector<double> values = concat_keys(s, ctx.input(kAttnPastValue),
                                           *ctx.input(kAttnV), s.value_dim);
  std::vector<double> mask = to_f64(ctx.input(kAttnMask));
  std::vector<int64_t> mask_strides;
  if (s.has_mask) {
    mask_strides = broadcast_strides(
        s.mask_dims, {s.batch, s.q_heads, s.q_len, s.total_len});
  }
  SEQRT_ASSIGN_OR_RETURN(
      Tensor * y,
      ctx.allocate_output(kAttnY, q_tensor.dtype(),
                          {s.batch, s.q_heads, s.q_len, s.value_dim}));
  const int64_t group = s.q_heads / s.kv_heads;
  std::vector<double> row(static_cast<size_t>(s.value_dim));
  for (int64_t b = 0; b < s.batch; ++b) {
    const int64_t len = s.valid_len(b);
    for (int64_t h = 0; h < s.q_heads; ++h) {
      const int64_t kv = (b * s.kv_heads + h / group) * s.total_len;
      for (int64_t i = 0; i < s.q_len; ++i) {
        const int64_t p = len - s.q_len + i;
        const double* qi = &q[((b * s.q_heads + h) * s.q_len + i) * s.head_dim];
        auto [lo, hi] = band(s, p, len);
        std::vector<double> logits(static_cast<size_t>(len), 0.0);
        std::vector<bool> visible(static_cast<size_t>(len), false);
        for (int64_t j = lo; j < hi; ++j) {
          const double* kj = &keys[(kv + j) * s.head_dim];
          double dot = 0.0;
          for (int64_t c = 0; c < s.head_dim; ++c) dot += qi[c] * kj[c];
          double logit = s.scale * dot;
          if (s.softcap > 0.0f) {
            logit = s.softcap * std::tanh(logit / s.softcap);
          }
          bool allowed = true;
          if (s.has_mask) {
            double m = mask[b * mask_strides[0] + h * mask_strides[1] +
                            i * mask_strides[2] + j * mask_strides[3]];
            if (s.mask_is_bool) {
              allowed = m != 0.0;
            } else {
              logit += m;
              allowed = logit != -std::numeric_limits<double>::infinity();
            }
          }
          logits[j] = logit;
          visible[j] = allowed;
        }
        std::fill(row.begin(), row.end(), 0.0);
        attend_row(s, logits, visible, &values[kv * s.value_dim], row.data());
        int64_t out = ((b * s.q_heads + h) * s.q_len + i) * s.value_dim;
        for (int64_t c = 0; c < s.value_dim; ++c) {
          y->set_element_f64(out + c, row[c]);
        }
      }
    }
  }
  const std::pair<size_t, const std::vector<double>*> presents[] = {
      {kAttnPresentKey, &keys}, {kAttnPresentValue, &values}};
  for (const auto& [index, data] : presents) {
    if (!attention_wants_output(ctx, index)) continue;
    int64_t width = index == kAttnPresentKey ? s.head_dim : s.value_dim;
    SEQRT_ASSIGN_OR_RETURN(
        Tensor * present,
        ctx.allocate_output(index, q_tensor.dtype(),
                            {s.batch, s.kv_heads, s.total_len, width}));
    for (size_t e = 0; e < data->size(); ++e) {
      present->set_element_f64(static_cast<int64_t>(e), (*data)[e]);
    }
  }
  return Status::ok();
}

}  // namespace

bool attention_wants_output(const KernelContext& ctx, size_t i) {
  return i < ctx.num_outputs() && i < ctx.node().outputs.size() &&
         ctx.node().outputs[i] != kNoValue;
}

Result<AttentionSpec> attention_spec(const KernelContext& ctx) {
  std::vector<ValueInfo> in;
  for (size_t i = 0; i < 7; ++i) {
    const Tensor* t = ctx.input(i);
    in.push_back(t ? ValueInfo{t->dtype(), t->shape(), nullptr} : ValueInfo{});
  }
  SEQRT_RETURN_IF_ERROR(check_attention(ctx, in).status());
  const Tensor& q = *ctx.input(kAttnQ);
  const Tensor& k = *ctx.input(kAttnK);
  const Tensor& v = *ctx.input(kAttnV);
  AttentionSpec s;
  s.batch = q.dim(0);
  s.q_heads = q.dim(1);
  s.q_len = q.dim(2);
  s.head_dim = q.dim(3);
  s.kv_heads = k.dim(1);
  s.new_len = k.dim(2);
  s.value_dim = v.dim(3);
  if (const Tensor* past = ctx.input(kAttnPastKey)) s.past_len = past->dim(2);
  s.total_len = s.past_len + s.new_len;
  SEQRT_ASSIGN_OR_RETURN(AttentionAttrs attrs,
                         AttentionAttrs::from(ctx.node()));
  s.sigmoid = attrs.sigmoid;
  s.scale = attrs.scale_for(s.head_dim);
  s.softcap = attrs.softcap;
  s.sigmoid_bias = attrs.sigmoid_bias;
  s.causal = attrs.causal;
  s.window_left = attrs.window_left;
  s.window_right = attrs.window_right;
  if (const Tensor* mask = ctx.input(kAttnMask)) {
    s.has_mask = true;
    s.mask_is_bool = mask->dtype() == DType::kBool;
    s.mask_dims = mask->dims();
  }
  if (const Tensor* lens = ctx.input(kAttnNonpadKvSeqlen)) {
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

Result<AttentionAttrs> AttentionAttrs::from(const Node& node) {
  AttentionAttrs a;
  int64_t causal = kIsCausalDefault;
  if (const Attribute* v = node.attr(kScoreName)) {
    a.sigmoid = v->as_string() == "sigmoid";
  }
  if (const Attribute* v = node.attr(kScaleName)) a.scale = v->as_float();
  if (const Attribute* v = node.attr(kSoftcapName)) a.softcap = v->as_float();
  if (const Attribute* v = node.attr(kIsCausalName)) causal = v->as_int();
  if (const Attribute* v = node.attr(kWindowLeftName)) {
    a.window_left = v->as_int();
  }
  if (const Attribute* v = node.attr(kWindowRightName)) {
    a.window_right = v->as_int();
  }
  if (const Attribute* v = node.attr(kSigmoidBiasName)) {
    a.sigmoid_bias = v->as_float();
  }
  if (causal != 0 && causal != 1) {
    return node_error(node, "is_causal must be 0 or 1, got {}", causal);
  }
  a.causal = causal != 0;
  for (auto [name, window] :
       {std::pair<const char*, int64_t>{kWindowLeftName, a.window_left},
        {kWindowRightName, a.window_right}}) {
    if (window < -1) {
      return node_error(node, "{} must be -1 (unbounded) or >= 0, got {}", name,
                        window);
    }
  }
  if (!(a.softcap >= 0.0f) || !std::isfinite(a.softcap)) {
    return node_error(node,
                      "softcap must be a finite value >= 0 (0 = off), got {}",
                      a.softcap);
  }
  if (a.scale.has_value() && !std::isfinite(*a.scale)) {
    return node_error(node, "scale must be finite, got {}", *a.scale);
  }
  if (!std::isfinite(a.sigmoid_bias)) {
    return node_error(node, "sigmoid_bias must be finite, got {}",
                      a.sigmoid_bias);
  }
  if (a.sigmoid_bias != 0.0f && !a.sigmoid) {
    return node_error(node,
                      "sigmoid_bias ({}) is only used with score = 'sigmoid'",
                      a.sigmoid_bias);
  }
  return a;
}

float AttentionAttrs::scale_for(int64_t head_dim) const {
  if (scale.has_value()) return *scale;
  return static_cast<float>(
      1.0 / std::sqrt(static_cast<double>(std::max<int64_t>(head_dim, 1))));
}

std::vector<AttrSpec> AttentionAttrs::specs() {
  return {
      AttrSpec{kScoreName,
               AttrType::kString,
               Attribute(kScoreDefault),
               false,
               {"softmax", "sigmoid"}},
      // No default: absent means 1/sqrt(d), which depends on the inputs.
      AttrSpec{kScaleName, AttrType::kFloat, std::nullopt, false, {}},
      AttrSpec{kSoftcapName,
               AttrType::kFloat,
               Attribute(kSoftcapDefault),
               false,
               {}},
      AttrSpec{kIsCausalName,
               AttrType::kInt,
               Attribute(kIsCausalDefault),
               false,
               {}},
      AttrSpec{kWindowLeftName,
               AttrType::kInt,
               Attribute(kWindowDefault),
               false,
               {}},
      AttrSpec{kWindowRightName,
               AttrType::kInt,
               Attribute(kWindowDefault),
               false,
               {}},
      AttrSpec{kSigmoidBiasName,
               AttrType::kFloat,
               Attribute(kSigmoidBiasDefault),
               false,
               {}},
  };
}

void register_seqrt_attention(OpRegistry& registry) {
  OpSchema s;
  s.domain = kSeqrtDomain;
  s.name = "Attention";
  s.doc = "softmax/sigmoid attention with GQA, KV cache, masks and windows";
  s.inputs = {{"Q"},
              {"K"},
              {"V"},
              {"attn_mask", true},
              {"past_key", true},
              {"past_value", true},
              {"nonpad_kv_seqlen", true}};
  s.outputs = {{"Y"}, {"present_key", true}, {"present_value", true}};
  s.attrs = AttentionAttrs::specs();
  s.infer = infer_attention;
  s.reference = run_attention;
  register_or_die(registry, std::move(s));
}

}  // namespace seqrt
