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

constexpr size_t kQ = 0, kK = 1, kV = 2, kPast = 3;

Status check_dtypes(const OpContext& ctx, DType q, DType k, DType v,
                    DType past) {
  SEQRT_RETURN_IF_ERROR(check_input_dtype(ctx, "input 'Q'", q, kFloatTypes));
  SEQRT_RETURN_IF_ERROR(check_same_dtype(ctx, "input 'Q'", q, "input 'K'", k));
  SEQRT_RETURN_IF_ERROR(check_same_dtype(ctx, "input 'Q'", q, "input 'V'", v));
  if (past != DType::kUndefined) {
    SEQRT_RETURN_IF_ERROR(
        check_input_dtype(ctx, "input 'past_state'", past, kFloatTypes));
  }
  return Status::ok();
}

Status check_gammas(const OpContext& ctx, int64_t heads,
                    std::vector<double>& gammas) {
  gammas.clear();
  if (!ctx.has_attr("gammas")) {
    for (int64_t h = 0; h < heads; ++h) {
      gammas.push_back(default_retention_gamma(h));
    }
    return Status::ok();
  }
  const std::vector<float>& given = ctx.attr_floats("gammas");
  if (static_cast<int64_t>(given.size()) != heads) {
    return ctx.error("gammas must have one value per head (H = {}), got {}",
                     heads, given.size());
  }
  for (float gamma : given) {
    // γ > 1 would grow the state without bound; NaN is never a decay.
    if (!(gamma >= 0.0f && gamma <= 1.0f)) {
      return ctx.error("gammas must lie in [0, 1], got {}", gamma);
    }
    gammas.push_back(gamma);
  }
  return Status::ok();
}

Status infer_retention(InferContext& ctx) {
  SEQRT_RETURN_IF_ERROR(check_dtypes(
      ctx, ctx.input_dtype(kQ), ctx.input_dtype(kK), ctx.input_dtype(kV),
      ctx.has_input(kPast) ? ctx.input_dtype(kPast) : DType::kUndefined));
  for (size_t i : {kQ, kK, kV}) {
    const std::optional<Shape>& s = ctx.input_shape(i);
    if (s && s->rank() != 4) {
      return ctx.error("input {} must have rank 4 (B,H,T,d), got {}", i,
                       s->to_string());
    }
  }
  const std::optional<Shape>& q = ctx.input_shape(kQ);
  const std::optional<Shape>& v = ctx.input_shape(kV);
  Dim batch, heads, seq, dk, dv;
  if (q) {
    batch = (*q)[0];
    heads = (*q)[1];
    seq = (*q)[2];
    dk = (*q)[3];
  }
  if (v) dv = (*v)[3];
  if (heads.is_fixed() && ctx.has_attr("gammas") &&
      static_cast<int64_t>(ctx.attr_floats("gammas").size()) != heads.value()) {
    return ctx.error("gammas must have one value per head (H = {}), got {}",
                     heads.value(), ctx.attr_floats("gammas").size());
  }
  ctx.set_output(0, ctx.input_dtype(kQ), Shape({batch, heads, seq, dv}));
  if (ctx.num_outputs() > 1) {
    DType state =
        ctx.has_input(kPast) ? ctx.input_dtype(kPast) : ctx.input_dtype(kQ);
    ctx.set_output(1, state, Shape({batch, heads, dk, dv}));
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
  const Tensor* past = ctx.input(kPast);
  SEQRT_ASSIGN_OR_RETURN(RetentionProblem p,
                         check_retention(ctx, *ctx.input(kQ), *ctx.input(kK),
                                         *ctx.input(kV), past));
  SEQRT_ASSIGN_OR_RETURN(Tensor * y,
                         ctx.allocate_output(0, ctx.input(kQ)->dtype(),
                                             {p.batch, p.heads, p.seq, p.dv}));
  Tensor* present = nullptr;
  if (ctx.num_outputs() > 1) {
    SEQRT_ASSIGN_OR_RETURN(
        present,
        ctx.allocate_output(1, p.state_dtype, {p.batch, p.heads, p.dk, p.dv}));
  }
  const int64_t state_size = p.dk * p.dv;
  std::vector<double> S(state_size);
  for (int64_t bh = 0; bh < p.batch * p.heads; ++bh) {
    for (int64_t i = 0; i < state_size; ++i) {
      S[i] = past ? past->element_f64(bh * state_size + i) : 0.0;
    }
    recur_one_head(p, bh, *ctx.input(kQ), *ctx.input(kK), *ctx.input(kV), *y,
                   S);
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

Result<RetentionProblem> check_retention(const OpContext& ctx, const Tensor& q,
                                         const Tensor& k, const Tensor& v,
                                         const Tensor* past_state) {
  SEQRT_RETURN_IF_ERROR(
      check_dtypes(ctx, q.dtype(), k.dtype(), v.dtype(),
                   past_state ? past_state->dtype() : DType::kUndefined));
  if (q.rank() != 4) {
    return ctx.error("input 'Q' must be (B,H,T,dk), got {}",
                     dims_to_string(q.dims()));
  }
  RetentionProblem p;
  p.batch = q.dim(0);
  p.heads = q.dim(1);
  p.seq = q.dim(2);
  p.dk = q.dim(3);
  if (k.dims() != q.dims()) {
    return ctx.error("input 'K' must be (B,H,T,dk) = {} like Q, got {}",
                     dims_to_string(q.dims()), dims_to_string(k.dims()));
  }
  if (v.rank() != 4 || v.dim(0) != p.batch || v.dim(1) != p.heads ||
      v.dim(2) != p.seq) {
    return ctx.error("input 'V' must be (B,H,T,dv) = ({},{},{},dv), got {}",
                     p.batch, p.heads, p.seq, dims_to_string(v.dims()));
  }
  p.dv = v.dim(3);
  if (p.dk == 0 || p.dv == 0) {
    return ctx.error("dk and dv must be positive, got dk={} dv={}", p.dk, p.dv);
  }
  if (past_state) {
    std::vector<int64_t> want = {p.batch, p.heads, p.dk, p.dv};
    if (past_state->dims() != want) {
      return ctx.error("input 'past_state' must be (B,H,dk,dv) = {}, got {}",
                       dims_to_string(want),
                       dims_to_string(past_state->dims()));
    }
  }
  SEQRT_RETURN_IF_ERROR(check_gammas(ctx, p.heads, p.gammas));
  if (ctx.has_attr("scale")) {
    float scale = ctx.attr_float("scale");
    if (!std::isfinite(scale)) {
      return ctx.error("scale must be finite, got {}", scale);
    }
    p.scale = scale;
  } else {
    p.scale = 1.0 / std::sqrt(static_cast<double>(p.dk));
  }
  p.chunk_size = ctx.attr_int("chunk_size");
  if (p.chunk_size <= 0) {
    return ctx.error("chunk_size must be positive, got {}", p.chunk_size);
  }
  p.state_dtype = past_state ? past_state->dtype() : q.dtype();
  return p;
}

void register_retention(OpRegistry& registry) {
  OpSchema s;
  s.domain = kSeqrtDomain;
  s.name = "Retention";
  s.doc = "RetNet multi-scale retention: decayed linear attention per head";
  s.inputs = {{"Q"}, {"K"}, {"V"}, {"past_state", true}};
  s.outputs = {{"Y"}, {"present_state", true}};
  s.attrs = {
      AttrSpec{"gammas", AttrType::kFloats, std::nullopt, false, {}},
      AttrSpec{"scale", AttrType::kFloat, std::nullopt, false, {}},
      AttrSpec{"chunk_size", AttrType::kInt, Attribute(int64_t{64}), false, {}},
  };
  s.infer = infer_retention;
  s.reference = run_retention;
  register_or_die(registry, std::move(s));
}

}  // namespace seqrt
