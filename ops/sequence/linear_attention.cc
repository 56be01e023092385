// ONNX LinearAttention (opset 27): causal linear attention with a recurrent
// state S (d_k × d_v) per (batch, kv head), four update rules:
//   linear       S_t = S_{t-1} + k_t ⊗ v_t
//   gated        S_t = exp(g_t) S_{t-1} + k_t ⊗ v_t
//   delta        S_t = S_{t-1} + β_t k_t ⊗ (v_t − S_{t-1}ᵀ k_t)
//   gated_delta  S_t = exp(g_t) S_{t-1} + β_t k_t ⊗ (v_t − exp(g_t) S_{t-1}ᵀ
//   k_t)
// and o_t = scale · q_tᵀ S_t. A per-key decay g_t (d_k values) scales row i
// of S by exp(g_t[i]). Inputs are packed (B, T, H·d); query head h shares
// the state of kv head h / (H_q / H_kv). The reference kernel below is that
// token recurrence in fp64.
#include "ops/sequence/linear_attention.h"

#include <cmath>
#include <string>
#include <vector>

#include "ops/registry.h"
#include "ops/type_support.h"

namespace seqrt {
namespace {

constexpr size_t kQuery = 0, kKey = 1, kValue = 2, kPast = 3, kDecay = 4,
                 kBeta = 5;

LinearAttentionRule parse_rule(const std::string& name) {
  if (name == "linear") return LinearAttentionRule::kLinear;
  if (name == "gated") return LinearAttentionRule::kGated;
  if (name == "delta") return LinearAttentionRule::kDelta;
  return LinearAttentionRule::kGatedDelta;  // the schema allows only these
}

Status check_heads(const OpContext& ctx, int64_t q_heads, int64_t kv_heads) {
  if (q_heads <= 0 || kv_heads <= 0) {
    return ctx.error(
        "q_num_heads and kv_num_heads must be positive, got {} and {}", q_heads,
        kv_heads);
  }
  if (q_heads % kv_heads != 0) {
    return ctx.error("q_num_heads ({}) must be a multiple of kv_num_heads ({})",
                     q_heads, kv_heads);
  }
  return Status::ok();
}

Status check_dtypes(const OpContext& ctx, DType q, DType k, DType v, DType past,
                    DType decay, DType beta) {
  SEQRT_RETURN_IF_ERROR(
      check_input_dtype(ctx, "input 'query'", q, kFloatTypes));
  SEQRT_RETURN_IF_ERROR(
      check_same_dtype(ctx, "input 'query'", q, "input 'key'", k));
  SEQRT_RETURN_IF_ERROR(
      check_same_dtype(ctx, "input 'query'", q, "input 'value'", v));
  if (past != DType::kUndefined) {
    SEQRT_RETURN_IF_ERROR(
        check_input_dtype(ctx, "input 'past_state'", past, kFloatTypes));
  }
  if (decay != DType::kUndefined) {
    SEQRT_RETURN_IF_ERROR(
        check_same_dtype(ctx, "input 'query'", q, "input 'decay'", decay));
  }
  if (beta != DType::kUndefined) {
    SEQRT_RETURN_IF_ERROR(
        check_same_dtype(ctx, "input 'query'", q, "input 'beta'", beta));
  }
  return Status::ok();
}

Status check_rank(const OpContext& ctx, const char* what, const Tensor& t,
                  size_t rank) {
  if (t.rank() != rank) {
    return ctx.error("input '{}' must have rank {}, got shape {}", what, rank,
                     dims_to_string(t.dims()));
  }
  return Status::ok();
}

// decay (B,T,H_kv·dk) or (B,T,H_kv); beta (B,T,H_kv) or (B,T,1).
Status check_gates(const OpContext& ctx, const Tensor* decay,
                   const Tensor* beta, LinearAttentionProblem& p) {
  const LinearAttentionRule rule = p.rule;
  const std::string& rule_name = ctx.attr_string("update_rule");
  if (rule_uses_decay(rule)) {
    if (decay == nullptr) {
      return ctx.error("update_rule '{}' needs input 'decay'", rule_name);
    }
    SEQRT_RETURN_IF_ERROR(check_rank(ctx, "decay", *decay, 3));
    int64_t last = decay->dim(2);
    if (decay->dim(0) != p.batch || decay->dim(1) != p.seq ||
        (last != p.kv_heads * p.dk && last != p.kv_heads)) {
      return ctx.error(
          "input 'decay' must be (B,T,H_kv*d_k) = ({},{},{}) or (B,T,H_kv) = "
          "({},{},{}), got {}",
          p.batch, p.seq, p.kv_heads * p.dk, p.batch, p.seq, p.kv_heads,
          dims_to_string(decay->dims()));
    }
    p.decay_per_key = last == p.kv_heads * p.dk && last != p.kv_heads;
  }
  if (rule_uses_beta(rule)) {
    if (beta == nullptr) {
      return ctx.error("update_rule '{}' needs input 'beta'", rule_name);
    }
    SEQRT_RETURN_IF_ERROR(check_rank(ctx, "beta", *beta, 3));
    int64_t last = beta->dim(2);
    if (beta->dim(0) != p.batch || beta->dim(1) != p.seq ||
        (last != p.kv_heads && last != 1)) {
      return ctx.error(
          "input 'beta' must be (B,T,H_kv) = ({},{},{}) or (B,T,1), got {}",
          p.batch, p.seq, p.kv_heads, dims_to_string(beta->dims()));
    }
    p.beta_per_head = last == p.kv_heads;
  }
  return Status::ok();
}

Status check_packed_shapes(const OpContext& ctx, const Tensor& q,
                           const Tensor& k, const Tensor& v,
                           LinearAttentionProblem& p) {
  SEQRT_RETURN_IF_ERROR(check_rank(ctx, "query", q, 3));
  SEQRT_RETURN_IF_ERROR(check_rank(ctx, "key", k, 3));
  SEQRT_RETURN_IF_ERROR(check_rank(ctx, "value", v, 3));
  p.batch = q.dim(0);
  p.seq = q.dim(1);
  if (q.dim(2) % p.q_heads != 0 || q.dim(2) == 0) {
    return ctx.error(
        "input 'query' last dim ({}) must be q_num_heads ({}) * d_k with "
        "d_k >= 1",
        q.dim(2), p.q_heads);
  }
  p.dk = q.dim(2) / p.q_heads;
  if (k.dim(0) != p.batch || k.dim(1) != p.seq ||
      k.dim(2) != p.kv_heads * p.dk) {
    return ctx.error("input 'key' must be (B,T,H_kv*d_k) = ({},{},{}), got {}",
                     p.batch, p.seq, p.kv_heads * p.dk,
                     dims_to_string(k.dims()));
  }
  if (v.dim(0) != p.batch || v.dim(1) != p.seq || v.dim(2) % p.kv_heads != 0 ||
      v.dim(2) == 0) {
    return ctx.error(
        "input 'value' must be (B,T,H_kv*d_v) = ({},{},{}*d_v) with d_v >= 1, "
        "got {}",
        p.batch, p.seq, p.kv_heads, dims_to_string(v.dims()));
  }
  p.dv = v.dim(2) / p.kv_heads;
  return Status::ok();
}

Status infer_linear_attention(InferContext& ctx) {
  int64_t q_heads = ctx.attr_int("q_num_heads");
  int64_t kv_heads = ctx.attr_int("kv_num_heads");
  SEQRT_RETURN_IF_ERROR(check_heads(ctx, q_heads, kv_heads));
  auto dtype_of_input = [&](size_t i) {
    return ctx.has_input(i) ? ctx.input_dtype(i) : DType::kUndefined;
  };
  SEQRT_RETURN_IF_ERROR(
      check_dtypes(ctx, ctx.input_dtype(kQuery), ctx.input_dtype(kKey),
                   ctx.input_dtype(kValue), dtype_of_input(kPast),
                   dtype_of_input(kDecay), dtype_of_input(kBeta)));
  const std::optional<Shape>& q = ctx.input_shape(kQuery);
  const std::optional<Shape>& v = ctx.input_shape(kValue);
  for (size_t i : {kQuery, kKey, kValue}) {
    const std::optional<Shape>& s = ctx.input_shape(i);
    if (s && s->rank() != 3) {
      return ctx.error("input {} must have rank 3 (B,T,H*d), got {}", i,
                       s->to_string());
    }
  }
  Dim batch, seq, dk, dv;
  if (q) {
    batch = (*q)[0];
    seq = (*q)[1];
    if ((*q)[2].is_fixed()) dk = (*q)[2].value() / q_heads;
  }
  if (v && (*v)[2].is_fixed()) dv = (*v)[2].value() / kv_heads;
  Dim out_last = dv.is_fixed() ? Dim(dv.value() * q_heads) : Dim();
  ctx.set_output(0, ctx.input_dtype(kQuery), Shape({batch, seq, out_last}));
  if (ctx.num_outputs() > 1) {
    DType state =
        ctx.has_input(kPast) ? ctx.input_dtype(kPast) : ctx.input_dtype(kQuery);
    ctx.set_output(1, state, Shape({batch, Dim(kv_heads), dk, dv}));
  }
  return Status::ok();
}

// Reads element (b, t, head·width + i) of a packed (B,T,H·width) tensor.
struct Packed {
  const Tensor& t;
  int64_t seq, last;
  double at(int64_t b, int64_t s, int64_t i) const {
    return t.element_f64((b * seq + s) * last + i);
  }
};

// One (batch, kv head): runs the recurrence over all tokens, writing the
// group's query heads' outputs and leaving the final state in `S`.
void recur_one_head(const LinearAttentionProblem& p, int64_t b, int64_t g,
                    const Tensor& q, const Tensor& k, const Tensor& v,
                    const Tensor* decay, const Tensor* beta, Tensor& out,
                    std::vector<double>& S) {
  const int64_t dk = p.dk, dv = p.dv;
  Packed Q{q, p.seq, p.q_heads * dk}, K{k, p.seq, p.kv_heads * dk},
      V{v, p.seq, p.kv_heads * dv};
  std::vector<double> kt(dk), vt(dv), u(dv), factor(dk, 1.0);
  for (int64_t t = 0; t < p.seq; ++t) {
    for (int64_t i = 0; i < dk; ++i) kt[i] = K.at(b, t, g * dk + i);
    for (int64_t j = 0; j < dv; ++j) vt[j] = V.at(b, t, g * dv + j);
    if (rule_uses_decay(p.rule)) {
      Packed D{*decay, p.seq, decay->dim(2)};
      for (int64_t i = 0; i < dk; ++i) {
        factor[i] =
            std::exp(p.decay_per_key ? D.at(b, t, g * dk + i) : D.at(b, t, g));
        for (int64_t j = 0; j < dv; ++j) S[i * dv + j] *= factor[i];
      }
    }
    if (rule_uses_beta(p.rule)) {
      Packed B{*beta, p.seq, beta->dim(2)};
      double bt = B.at(b, t, p.beta_per_head ? g : 0);
      for (int64_t j = 0; j < dv; ++j) {
        double sk = 0.0;  // (S_{t-1} after decay)ᵀ k_t
        for (int64_t i = 0; i < dk; ++i) sk += S[i * dv + j] * kt[i];
        u[j] = bt * (vt[j] - sk);
      }
    } else {
      u = vt;
    }
    for (int64_t i = 0; i < dk; ++i) {
      for (int64_t j = 0; j < dv; ++j) S[i * dv + j] += kt[i] * u[j];
    }
    for (int64_t h = g * p.group; h < (g + 1) * p.group; ++h) {
      for (int64_t j = 0; j < dv; ++j) {
        double o = 0.0;
        for (int64_t i = 0; i < dk; ++i) {
          o += Q.at(b, t, h * dk + i) * S[i * dv + j];
        }
        out.set_element_f64((b * p.seq + t) * p.q_heads * dv + h * dv + j,
                            p.scale * o);
      }
    }
  }
}

Status run_linear_attention(KernelContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(
      LinearAttentionProblem p,
      check_linear_attention(ctx, ctx.input(kQuery), ctx.input(kKey),
                             ctx.input(kValue), ctx.input(kPast),
                             ctx.input(kDecay), ctx.input(kBeta)));
  const Tensor* past = ctx.input(kPast);
  SEQRT_ASSIGN_OR_RETURN(
      Tensor * out, ctx.allocate_output(0, ctx.input(kQuery)->dtype(),
                                        {p.batch, p.seq, p.q_heads * p.dv}));
  Tensor* present = nullptr;
  if (ctx.num_outputs() > 1) {
    SEQRT_ASSIGN_OR_RETURN(
        present, ctx.allocate_output(1, p.state_dtype,
                                     {p.batch, p.kv_heads, p.dk, p.dv}));
  }
  const int64_t state_size = p.dk * p.dv;
  std::vector<double> S(state_size);
  for (int64_t b = 0; b < p.batch; ++b) {
    for (int64_t g = 0; g < p.kv_heads; ++g) {
      int64_t base = (b * p.kv_heads + g) * state_size;
      for (int64_t i = 0; i < state_size; ++i) {
        S[i] = past ? past->element_f64(base + i) : 0.0;
      }
      recur_one_head(p, b, g, *ctx.input(kQuery), *ctx.input(kKey),
                     *ctx.input(kValue), ctx.input(kDecay), ctx.input(kBeta),
                     *out, S);
      if (present) {
        for (int64_t i = 0; i < state_size; ++i) {
          present->set_element_f64(base + i, S[i]);
        }
      }
    }
  }
  return Status::ok();
}

}  // namespace

Result<LinearAttentionProblem> check_linear_attention(
    const OpContext& ctx, const Tensor* query, const Tensor* key,
    const Tensor* value, const Tensor* past_state, const Tensor* decay,
    const Tensor* beta) {
  LinearAttentionProblem p;
  p.rule = parse_rule(ctx.attr_string("update_rule"));
  p.q_heads = ctx.attr_int("q_num_heads");
  p.kv_heads = ctx.attr_int("kv_num_heads");
  SEQRT_RETURN_IF_ERROR(check_heads(ctx, p.q_heads, p.kv_heads));
  p.group = p.q_heads / p.kv_heads;
  auto dtype = [](const Tensor* t) {
    return t ? t->dtype() : DType::kUndefined;
  };
  // Gates the rule does not read are ignored, as ONNX's function body does.
  const Tensor* used_decay = rule_uses_decay(p.rule) ? decay : nullptr;
  const Tensor* used_beta = rule_uses_beta(p.rule) ? beta : nullptr;
  SEQRT_RETURN_IF_ERROR(check_dtypes(ctx, query->dtype(), key->dtype(),
                                     value->dtype(), dtype(past_state),
                                     dtype(used_decay), dtype(used_beta)));
  SEQRT_RETURN_IF_ERROR(check_packed_shapes(ctx, *query, *key, *value, p));
  if (past_state) {
    std::vector<int64_t> want = {p.batch, p.kv_heads, p.dk, p.dv};
    if (past_state->dims() != want) {
      return ctx.error(
          "input 'past_state' must be (B,H_kv,d_k,d_v) = {}, got {}",
          dims_to_string(want), dims_to_string(past_state->dims()));
    }
  }
  SEQRT_RETURN_IF_ERROR(check_gates(ctx, used_decay, used_beta, p));
  float scale = ctx.attr_float("scale");
  if (!std::isfinite(scale)) {
    return ctx.error("scale must be finite, got {}", scale);
  }
  p.scale = scale != 0.0f ? static_cast<double>(scale)
                          : 1.0 / std::sqrt(static_cast<double>(p.dk));
  p.chunk_size = ctx.attr_int("chunk_size");
  if (p.chunk_size <= 0) {
    return ctx.error("chunk_size must be positive, got {}", p.chunk_size);
  }
  p.state_dtype = past_state ? past_state->dtype() : query->dtype();
  return p;
}

void register_linear_attention(OpRegistry& registry) {
  OpSchema s;
  s.domain = kOnnxDomain;
  s.name = "LinearAttention";
  s.doc = "causal linear attention with a recurrent d_k×d_v state (opset 27)";
  s.inputs = {{"query"},       {"key"},       {"value"}, {"past_state", true},
              {"decay", true}, {"beta", true}};
  s.outputs = {{"output"}, {"present_state", true}};
  s.attrs = {
      AttrSpec{"chunk_size", AttrType::kInt, Attribute(int64_t{64}), false, {}},
      AttrSpec{"kv_num_heads", AttrType::kInt, std::nullopt, true, {}},
      AttrSpec{"q_num_heads", AttrType::kInt, std::nullopt, true, {}},
      AttrSpec{"scale", AttrType::kFloat, Attribute(0.0f), false, {}},
      AttrSpec{"update_rule",
               AttrType::kString,
               Attribute(std::string("gated_delta")),
               false,
               {"linear", "gated", "delta", "gated_delta"}},
  };
  s.infer = infer_linear_attention;
  s.reference = run_linear_attention;
  register_or_die(registry, std::move(s));
}

}  // namespace seqrt
