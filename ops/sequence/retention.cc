// seqrt::Retention (OPS.md): RetNet multi-scale retention, one decay γ_h per
// head. Recurrent definition, per (b, h):
//   S_t = γ_h S_{t−1} + (scale·k_t)ᵀ v_t,  y_t = q_t S_t,  S_{−1} = past_state
// The reference kernel runs exactly that recurrence in fp64 (O(T·dk·dv));
// backends may use the parallel or chunkwise forms, which must agree.
#include "ops/sequence/retention.h"

#include <cmath>
#include <vector>

#include "ops/registry.h"
#include "ops/type_support.h"

namespace seqrt {
namespace {

using In = RetentionInput;
using Out = RetentionOutput;

Status check_dtypes(const Node& node, DType q, DType k, DType v, DType past) {
  if (!kFloatTypes.contains(q)) {
    return node_error(node, "input 'Q' must be {}, got {}",
                      kFloatTypes.to_string(), dtype_name(q));
  }
  for (auto [name, dtype] : {std::pair<const char*, DType>{"K", k}, {"V", v}}) {
    if (dtype == q) continue;
    return node_error(node,
                      "input 'Q' and input '{}' must have the same dtype, got "
                      "{} and {}",
                      name, dtype_name(q), dtype_name(dtype));
  }
  if (past != DType::kUndefined && !kFloatTypes.contains(past)) {
    return node_error(node, "input 'past_state' must be {}, got {}",
                      kFloatTypes.to_string(), dtype_name(past));
  }
  return Status::ok();
}

Status check_gammas(const Node& node, const RetentionAttrs& attrs,
                    int64_t heads, std::vector<double>& gammas) {
  gammas.clear();
  if (!attrs.gammas.has_value()) {
    for (int64_t h = 0; h < heads; ++h) {
      gammas.push_back(default_retention_gamma(h));
    }
    return Status::ok();
  }
  const std::vector<float>& given = *attrs.gammas;
  if (static_cast<int64_t>(given.size()) != heads) {
    return node_error(node,
                      "gammas must have one value per head (H = {}), got {}",
                      heads, given.size());
  }
  for (float gamma : given) {
    // γ > 1 would grow the state without bound; NaN is never a decay.
    if (!(gamma >= 0.0f && gamma <= 1.0f)) {
      return node_error(node, "gammas must lie in [0, 1], got {}", gamma);
    }
    gammas.push_back(gamma);
  }
  return Status::ok();
}

Status infer_retention(InferContext& ctx) {
  const KernelInputTypes types = infer_input_types(ctx, In::kCount);
  SEQRT_RETURN_IF_ERROR(check_dtypes(ctx.node(), types.dtypes[In::kQ],
                                     types.dtypes[In::kK], types.dtypes[In::kV],
                                     types.dtypes[In::kPastState]));
  for (size_t i : {In::kQ, In::kK, In::kV}) {
    const std::optional<Shape>& s = ctx.input_shape(i);
    if (s && s->rank() != 4) {
      return ctx.error("input {} must have rank 4 (B,H,T,d), got {}", i,
                       s->to_string());
    }
  }
  const std::optional<Shape>& q = ctx.input_shape(In::kQ);
  const std::optional<Shape>& v = ctx.input_shape(In::kV);
  Dim batch, heads, seq, dk, dv;
  if (q) {
    batch = (*q)[0];
    heads = (*q)[1];
    seq = (*q)[2];
    dk = (*q)[3];
  }
  if (v) dv = (*v)[3];
  const RetentionAttrs attrs = RetentionAttrs::from(ctx.node());
  if (heads.is_fixed() && attrs.gammas.has_value() &&
      static_cast<int64_t>(attrs.gammas->size()) != heads.value()) {
    return ctx.error("gammas must have one value per head (H = {}), got {}",
                     heads.value(), attrs.gammas->size());
  }
  ctx.set_output(Out::kY, types.dtypes[In::kQ], Shape({batch, heads, seq, dv}));
  if (ctx.num_outputs() > Out::kPresentState) {
    DType state = ctx.has_input(In::kPastState) ? types.dtypes[In::kPastState]
                                                : types.dtypes[In::kQ];
    ctx.set_output(Out::kPresentState, state, Shape({batch, heads, dk, dv}));
  }
  return Status::ok();
}

// One (b, h): the recurrence over all tokens; S holds the final state.
void recur_one_head(const RetentionProblem& p, int64_t bh, const Tensor& q,
                    const Tensor& k, const Tensor& v, Tensor& y,
                    std::vector<double>& S) {
  const int64_t dk = p.dk, dv = p.dv;
  const double gamma = p.gammas[bh % p.heads];
  std::vector<double> kt(dk);
  for (int64_t t = 0; t < p.seq; ++t) {
    int64_t row = bh * p.seq + t;
    for (int64_t i = 0; i < dk; ++i) {
      kt[i] = p.scale * k.element_f64(row * dk + i);
    }
    for (int64_t i = 0; i < dk; ++i) {
      for (int64_t j = 0; j < dv; ++j) {
        S[i * dv + j] =
            gamma * S[i * dv + j] + kt[i] * v.element_f64(row * dv + j);
      }
    }
    for (int64_t j = 0; j < dv; ++j) {
      double acc = 0.0;
      for (int64_t i = 0; i < dk; ++i) {
        acc += q.element_f64(row * dk + i) * S[i * dv + j];
      }
      y.set_element_f64(row * dv + j, acc);
    }
  }
}

Status run_retention(KernelContext& ctx) {
  const Tensor* past = ctx.input(In::kPastState);
  SEQRT_ASSIGN_OR_RETURN(RetentionProblem p, check_retention(ctx));
  SEQRT_ASSIGN_OR_RETURN(
      Tensor * y, ctx.allocate_output(Out::kY, ctx.input(In::kQ)->dtype(),
                                      {p.batch, p.heads, p.seq, p.dv}));
  Tensor* present = nullptr;
  if (ctx.num_outputs() > Out::kPresentState) {
    SEQRT_ASSIGN_OR_RETURN(
        present, ctx.allocate_output(Out::kPresentState, p.state_dtype,
                                     {p.batch, p.heads, p.dk, p.dv}));
  }
  const int64_t state_size = p.dk * p.dv;
  std::vector<double> S(state_size);
  for (int64_t bh = 0; bh < p.batch * p.heads; ++bh) {
    for (int64_t i = 0; i < state_size; ++i) {
      S[i] = past ? past->element_f64(bh * state_size + i) : 0.0;
    }
    recur_one_head(p, bh, *ctx.input(In::kQ), *ctx.input(In::kK),
                   *ctx.input(In::kV), *y, S);
    if (present) {
      for (int64_t i = 0; i < state_size; ++i) {
        present->set_element_f64(bh * state_size + i, S[i]);
      }
    }
  }
  return Status::ok();
}

}  // namespace

double default_retention_gamma(int64_t head) {
  return 1.0 - std::ldexp(1.0, static_cast<int>(-5 - head));
}

Result<RetentionProblem> check_retention(const Node& node,
                                         const KernelInputTypes& types) {
  SEQRT_RETURN_IF_ERROR(check_dtypes(node, types.dtypes[In::kQ],
                                     types.dtypes[In::kK], types.dtypes[In::kV],
                                     types.dtypes[In::kPastState]));
  SEQRT_ASSIGN_OR_RETURN(std::vector<int64_t> q,
                         fixed_input_dims(node, types, In::kQ, "Q"));
  SEQRT_ASSIGN_OR_RETURN(std::vector<int64_t> k,
                         fixed_input_dims(node, types, In::kK, "K"));
  SEQRT_ASSIGN_OR_RETURN(std::vector<int64_t> v,
                         fixed_input_dims(node, types, In::kV, "V"));
  SEQRT_ASSIGN_OR_RETURN(
      std::vector<int64_t> past,
      fixed_input_dims(node, types, In::kPastState, "past_state"));
  if (q.size() != 4) {
    return node_error(node, "input 'Q' must be (B,H,T,dk), got {}",
                      dims_to_string(q));
  }
  RetentionProblem p;
  p.batch = q[0];
  p.heads = q[1];
  p.seq = q[2];
  p.dk = q[3];
  if (k != q) {
    return node_error(node, "input 'K' must be (B,H,T,dk) = {} like Q, got {}",
                      dims_to_string(q), dims_to_string(k));
  }
  if (v.size() != 4 || v[0] != p.batch || v[1] != p.heads || v[2] != p.seq) {
    return node_error(node,
                      "input 'V' must be (B,H,T,dv) = ({},{},{},dv), got {}",
                      p.batch, p.heads, p.seq, dims_to_string(v));
  }
  p.dv = v[3];
  if (p.dk == 0 || p.dv == 0) {
    return node_error(node, "dk and dv must be positive, got dk={} dv={}", p.dk,
                      p.dv);
  }
  const bool has_past = types.dtypes[In::kPastState] != DType::kUndefined;
  if (has_past) {
    std::vector<int64_t> want = {p.batch, p.heads, p.dk, p.dv};
    if (past != want) {
      return node_error(node,
                        "input 'past_state' must be (B,H,dk,dv) = {}, got {}",
                        dims_to_string(want), dims_to_string(past));
    }
  }
  const RetentionAttrs attrs = RetentionAttrs::from(node);
  SEQRT_RETURN_IF_ERROR(check_gammas(node, attrs, p.heads, p.gammas));
  if (attrs.scale.has_value()) {
    if (!std::isfinite(*attrs.scale)) {
      return node_error(node, "scale must be finite, got {}", *attrs.scale);
    }
    p.scale = *attrs.scale;
  } else {
    p.scale = 1.0 / std::sqrt(static_cast<double>(p.dk));
  }
  p.chunk_size = attrs.chunk_size;
  if (p.chunk_size <= 0) {
    return node_error(node, "chunk_size must be positive, got {}",
                      p.chunk_size);
  }
  p.state_dtype =
      has_past ? types.dtypes[In::kPastState] : types.dtypes[In::kQ];
  return p;
}

Result<RetentionProblem> check_retention(const KernelContext& ctx) {
  return check_retention(ctx.node(), kernel_input_types(ctx, In::kCount));
}

RetentionAttrs RetentionAttrs::from(const Node& node) {
  RetentionAttrs attrs;
  if (const Attribute* a = node.attr(kGammasName))
    attrs.gammas = a->as_floats();
  if (const Attribute* a = node.attr(kScaleName)) attrs.scale = a->as_float();
  if (const Attribute* a = node.attr(kChunkSizeName)) {
    attrs.chunk_size = a->as_int();
  }
  return attrs;
}

std::vector<AttrSpec> RetentionAttrs::specs() {
  return {
      AttrSpec{kGammasName, AttrType::kFloats, std::nullopt, false, {}},
      AttrSpec{kScaleName, AttrType::kFloat, std::nullopt, false, {}},
      AttrSpec{kChunkSizeName,
               AttrType::kInt,
               Attribute(kChunkSizeDefault),
               false,
               {}},
  };
}

void register_retention(OpRegistry& registry) {
  OpSchema s;
  s.domain = kSeqrtDomain;
  s.name = "Retention";
  s.doc = "RetNet multi-scale retention: decayed linear attention per head";
  s.inputs = {{"Q"}, {"K"}, {"V"}, {"past_state", true}};
  s.outputs = {{"Y"}, {"present_state", true}};
  s.attrs = RetentionAttrs::specs();
  s.infer = infer_retention;
  s.reference = run_retention;
  register_or_die(registry, std::move(s));
}

}  // namespace seqrt
