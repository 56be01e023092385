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

using In = LinearAttentionInput;
using Out = LinearAttentionOutput;

const char* const kInputNames[In::kCount] = {"query",      "key",   "value",
                                             "past_state", "decay", "beta"};

LinearAttentionRule parse_rule(const std::string& name) {
  if (name == "linear") return LinearAttentionRule::kLinear;
  if (name == "gated") return LinearAttentionRule::kGated;
  if (name == "delta") return LinearAttentionRule::kDelta;
  return LinearAttentionRule::kGatedDelta;  // the schema allows only these
}

Status check_heads(const Node& node, int64_t q_heads, int64_t kv_heads) {
  if (q_heads <= 0 || kv_heads <= 0) {
    return node_error(
        node, "q_num_heads and kv_num_heads must be positive, got {} and {}",
        q_heads, kv_heads);
  }
  if (q_heads % kv_heads != 0) {
    return node_error(
        node, "q_num_heads ({}) must be a multiple of kv_num_heads ({})",
        q_heads, kv_heads);
  }
  return Status::ok();
}

// query is a float type; key, value and the gates have its dtype.
Status check_dtypes(const Node& node, const std::vector<DType>& dtypes) {
  const DType q = dtypes[In::kQuery];
  if (!kFloatTypes.contains(q)) {
    return node_error(node, "input 'query' must be {}, got {}",
                      kFloatTypes.to_string(), dtype_name(q));
  }
  for (size_t i : {In::kKey, In::kValue, In::kDecay, In::kBeta}) {
    const DType dtype = dtypes[i];
    if (dtype == q || (i >= In::kDecay && dtype == DType::kUndefined)) {
      continue;
    }
    return node_error(node,
                      "input 'query' and input '{}' must have the same dtype, "
                      "got {} and {}",
                      kInputNames[i], dtype_name(q), dtype_name(dtype));
  }
  const DType past = dtypes[In::kPastState];
  if (past != DType::kUndefined && !kFloatTypes.contains(past)) {
    return node_error(node, "input 'past_state' must be {}, got {}",
                      kFloatTypes.to_string(), dtype_name(past));
  }
  return Status::ok();
}

Status check_rank(const Node& node, const char* what,
                  const std::vector<int64_t>& dims, size_t rank) {
  if (dims.size() != rank) {
    return node_error(node, "input '{}' must have rank {}, got shape {}", what,
                      rank, dims_to_string(dims));
  }
  return Status::ok();
}

// decay (B,T,H_kv·dk) or (B,T,H_kv); beta (B,T,H_kv) or (B,T,1).
Status check_gates(const Node& node, const std::string& rule_name,
                   const KernelInputTypes& types, LinearAttentionProblem& p) {
  const LinearAttentionRule rule = p.rule;
  if (rule_uses_decay(rule)) {
    if (types.dtypes[In::kDecay] == DType::kUndefined) {
      return node_error(node, "update_rule '{}' needs input 'decay'",
                        rule_name);
    }
    SEQRT_ASSIGN_OR_RETURN(std::vector<int64_t> decay,
                           fixed_input_dims(node, types, In::kDecay, "decay"));
    SEQRT_RETURN_IF_ERROR(check_rank(node, "decay", decay, 3));
    int64_t last = decay[2];
    if (decay[0] != p.batch || decay[1] != p.seq ||
        (last != p.kv_heads * p.dk && last != p.kv_heads)) {
      return node_error(
          node,
          "input 'decay' must be (B,T,H_kv*d_k) = ({},{},{}) or (B,T,H_kv) = "
          "({},{},{}), got {}",
          p.batch, p.seq, p.kv_heads * p.dk, p.batch, p.seq, p.kv_heads,
          dims_to_string(decay));
    }
    p.decay_per_key = last == p.kv_heads * p.dk && last != p.kv_heads;
  }
  if (rule_uses_beta(rule)) {
    if (types.dtypes[In::kBeta] == DType::kUndefined) {
      return node_error(node, "update_rule '{}' needs input 'beta'", rule_name);
    }
    SEQRT_ASSIGN_OR_RETURN(std::vector<int64_t> beta,
                           fixed_input_dims(node, types, In::kBeta, "beta"));
    SEQRT_RETURN_IF_ERROR(check_rank(node, "beta", beta, 3));
    int64_t last = beta[2];
    if (beta[0] != p.batch || beta[1] != p.seq ||
        (last != p.kv_heads && last != 1)) {
      return node_error(
          node,
          "input 'beta' must be (B,T,H_kv) = ({},{},{}) or (B,T,1), got {}",
          p.batch, p.seq, p.kv_heads, dims_to_string(beta));
    }
    p.beta_per_head = last == p.kv_heads;
  }
  return Status::ok();
}

Status check_packed_shapes(const Node& node, const std::vector<int64_t>& q,
                           const std::vector<int64_t>& k,
                           const std::vector<int64_t>& v,
                           LinearAttentionProblem& p) {
  SEQRT_RETURN_IF_ERROR(check_rank(node, "query", q, 3));
  SEQRT_RETURN_IF_ERROR(check_rank(node, "key", k, 3));
  SEQRT_RETURN_IF_ERROR(check_rank(node, "value", v, 3));
  p.batch = q[0];
  p.seq = q[1];
  if (q[2] % p.q_heads != 0 || q[2] == 0) {
    return node_error(
        node,
        "input 'query' last dim ({}) must be q_num_heads ({}) * d_k with "
        "d_k >= 1",
        q[2], p.q_heads);
  }
  p.dk = q[2] / p.q_heads;
  if (k[0] != p.batch || k[1] != p.seq || k[2] != p.kv_heads * p.dk) {
    return node_error(node,
                      "input 'key' must be (B,T,H_kv*d_k) = ({},{},{}), got {}",
                      p.batch, p.seq, p.kv_heads * p.dk, dims_to_string(k));
  }
  if (v[0] != p.batch || v[1] != p.seq || v[2] % p.kv_heads != 0 || v[2] == 0) {
    return node_error(
        node,
        "input 'value' must be (B,T,H_kv*d_v) = ({},{},{}*d_v) with d_v >= 1, "
        "got {}",
        p.batch, p.seq, p.kv_heads, dims_to_string(v));
  }
  p.dv = v[2] / p.kv_heads;
  return Status::ok();
}

Status infer_linear_attention(InferContext& ctx) {
  const LinearAttentionAttrs attrs = LinearAttentionAttrs::from(ctx.node());
  const int64_t q_heads = attrs.q_heads;
  const int64_t kv_heads = attrs.kv_heads;
  SEQRT_RETURN_IF_ERROR(check_heads(ctx.node(), q_heads, kv_heads));
  const KernelInputTypes types = infer_input_types(ctx, In::kCount);
  SEQRT_RETURN_IF_ERROR(check_dtypes(ctx.node(), types.dtypes));
  const std::optional<Shape>& q = ctx.input_shape(In::kQuery);
  const std::optional<Shape>& v = ctx.input_shape(In::kValue);
  for (size_t i : {In::kQuery, In::kKey, In::kValue}) {
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
  ctx.set_output(Out::kOutput, types.dtypes[In::kQuery],
                 Shape({batch, seq, out_last}));
  if (ctx.num_outputs() > Out::kPresentState) {
    DType state = ctx.has_input(In::kPastState) ? types.dtypes[In::kPastState]
                                                : types.dtypes[In::kQuery];
    ctx.set_output(Out::kPresentState, state,
                   Shape({batch, Dim(kv_heads), dk, dv}));
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
  SEQRT_ASSIGN_OR_RETURN(LinearAttentionProblem p, check_linear_attention(ctx));
  const Tensor* past = ctx.input(In::kPastState);
  SEQRT_ASSIGN_OR_RETURN(
      Tensor * out,
      ctx.allocate_output(Out::kOutput, ctx.input(In::kQuery)->dtype(),
                          {p.batch, p.seq, p.q_heads * p.dv}));
  Tensor* present = nullptr;
  if (ctx.num_outputs() > Out::kPresentState) {
    SEQRT_ASSIGN_OR_RETURN(
        present, ctx.allocate_output(Out::kPresentState, p.state_dtype,
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
      recur_one_head(p, b, g, *ctx.input(In::kQuery), *ctx.input(In::kKey),
                     *ctx.input(In::kValue), ctx.input(In::kDecay),
                     ctx.input(In::kBeta), *out, S);
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
    const Node& node, const KernelInputTypes& given) {
  const LinearAttentionAttrs attrs = LinearAttentionAttrs::from(node);
  LinearAttentionProblem p;
  p.rule = attrs.rule;
  p.q_heads = attrs.q_heads;
  p.kv_heads = attrs.kv_heads;
  SEQRT_RETURN_IF_ERROR(check_heads(node, p.q_heads, p.kv_heads));
  p.group = p.q_heads / p.kv_heads;
  // Gates the rule does not read are ignored, as ONNX's function body does.
  KernelInputTypes types = given;
  for (size_t i : {In::kDecay, In::kBeta}) {
    const bool used =
        i == In::kDecay ? rule_uses_decay(p.rule) : rule_uses_beta(p.rule);
    if (used) continue;
    types.shapes[i] = std::nullopt;
    types.dtypes[i] = DType::kUndefined;
  }
  SEQRT_RETURN_IF_ERROR(check_dtypes(node, types.dtypes));
  std::vector<int64_t> dims[In::kDecay];
  for (size_t i = 0; i < In::kDecay; ++i) {
    SEQRT_ASSIGN_OR_RETURN(dims[i],
                           fixed_input_dims(node, types, i, kInputNames[i]));
  }
  SEQRT_RETURN_IF_ERROR(check_packed_shapes(
      node, dims[In::kQuery], dims[In::kKey], dims[In::kValue], p));
  const bool has_past = types.dtypes[In::kPastState] != DType::kUndefined;
  if (has_past) {
    std::vector<int64_t> want = {p.batch, p.kv_heads, p.dk, p.dv};
    if (dims[In::kPastState] != want) {
      return node_error(
          node, "input 'past_state' must be (B,H_kv,d_k,d_v) = {}, got {}",
          dims_to_string(want), dims_to_string(dims[In::kPastState]));
    }
  }
  SEQRT_RETURN_IF_ERROR(check_gates(node, attrs.rule_name, types, p));
  if (!std::isfinite(attrs.scale)) {
    return node_error(node, "scale must be finite, got {}", attrs.scale);
  }
  p.scale = attrs.scale != 0.0f ? static_cast<double>(attrs.scale)
                                : 1.0 / std::sqrt(static_cast<double>(p.dk));
  p.chunk_size = attrs.chunk_size;
  if (p.chunk_size <= 0) {
    return node_error(node, "chunk_size must be positive, got {}",
                      p.chunk_size);
  }
  p.state_dtype =
      has_past ? types.dtypes[In::kPastState] : types.dtypes[In::kQuery];
  return p;
}

Result<LinearAttentionProblem> check_linear_attention(
    const KernelContext& ctx) {
  return check_linear_attention(ctx.node(),
                                kernel_input_types(ctx, In::kCount));
}

LinearAttentionAttrs LinearAttentionAttrs::from(const Node& node) {
  LinearAttentionAttrs attrs;
  if (const Attribute* a = node.attr(kQHeadsName)) attrs.q_heads = a->as_int();
  if (const Attribute* a = node.attr(kKvHeadsName)) {
    attrs.kv_heads = a->as_int();
  }
  if (const Attribute* a = node.attr(kUpdateRuleName)) {
    attrs.rule_name = a->as_string();
  }
  attrs.rule = parse_rule(attrs.rule_name);
  if (const Attribute* a = node.attr(kScaleName)) attrs.scale = a->as_float();
  if (const Attribute* a = node.attr(kChunkSizeName)) {
    attrs.chunk_size = a->as_int();
  }
  return attrs;
}

std::vector<AttrSpec> LinearAttentionAttrs::specs() {
  return {
      AttrSpec{kChunkSizeName,
               AttrType::kInt,
               Attribute(kChunkSizeDefault),
               false,
               {}},
      AttrSpec{kKvHeadsName, AttrType::kInt, std::nullopt, true, {}},
      AttrSpec{kQHeadsName, AttrType::kInt, std::nullopt, true, {}},
      AttrSpec{
          kScaleName, AttrType::kFloat, Attribute(kScaleDefault), false, {}},
      AttrSpec{kUpdateRuleName,
               AttrType::kString,
               Attribute(kUpdateRuleDefault),
               false,
               {"linear", "gated", "delta", "gated_delta"}},
  };
}

void register_linear_attention(OpRegistry& registry) {
  OpSchema s;
  s.domain = kOnnxDomain;
  s.name = "LinearAttention";
  s.doc = "causal linear attention with a recurrent d_k×d_v state (opset 27)";
  for (size_t i = 0; i < In::kCount; ++i) {
    s.inputs.push_back({kInputNames[i], i >= In::kPastState});
  }
  s.outputs = {{"output"}, {"present_state", true}};
  s.attrs = LinearAttentionAttrs::specs();
  s.infer = infer_linear_attention;
  s.reference = run_linear_attention;
  register_or_die(registry, std::move(s));
}

}  // namespace seqrt
