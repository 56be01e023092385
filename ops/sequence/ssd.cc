// seqrt::SSD (Mamba-2 state-space duality, OPS.md): per head a scalar decay
// exp(Δ·A_h) of a P×N state. The reference is the recurrent form, token by
// token; the chunked form is a backend's business and must equal it.
#include "ops/sequence/ssd.h"

#include <cmath>

#include "ops/registry.h"

namespace seqrt {
namespace {

using In = SsdInput;

const char* const kInputNames[In::kCount] = {
    "x", "dt", "A", "Bm", "Cm", "D", "z", "dt_bias", "past_state"};

// Binds B, L, H, P, G, N; inference reads its output shapes from `dims`.
Status bind_ssd(const Node& node, const KernelInputTypes& types,
                DimBinder& dims) {
  SEQRT_RETURN_IF_ERROR(check_float_inputs(node, types, kInputNames));
  const std::vector<std::optional<Shape>>& shapes = types.shapes;
  SEQRT_RETURN_IF_ERROR(dims.expect("x", shapes[In::kX], {"B", "L", "H", "P"}));
  SEQRT_RETURN_IF_ERROR(dims.expect("dt", shapes[In::kDt], {"B", "L", "H"}));
  SEQRT_RETURN_IF_ERROR(dims.expect("A", shapes[In::kA], {"H"}));
  SEQRT_RETURN_IF_ERROR(
      dims.expect("Bm", shapes[In::kBm], {"B", "L", "G", "N"}));
  SEQRT_RETURN_IF_ERROR(
      dims.expect("Cm", shapes[In::kCm], {"B", "L", "G", "N"}));
  SEQRT_RETURN_IF_ERROR(dims.expect("D", shapes[In::kD], {"H"}));
  SEQRT_RETURN_IF_ERROR(dims.expect("z", shapes[In::kZ], {"B", "L", "H", "P"}));
  SEQRT_RETURN_IF_ERROR(dims.expect("dt_bias", shapes[In::kDtBias], {"H"}));
  SEQRT_RETURN_IF_ERROR(
      dims.expect("past_state", shapes[In::kPastState], {"B", "H", "P", "N"}));
  return dims.expect_multiple("H", "G");
}

Status infer_ssd(InferContext& ctx) {
  SEQRT_RETURN_IF_ERROR(SsdAttrs::from(ctx.node()).status());
  const KernelInputTypes types = infer_input_types(ctx, In::kCount);
  DimBinder dims(ctx.node());
  SEQRT_RETURN_IF_ERROR(bind_ssd(ctx.node(), types, dims));
  ctx.set_output(SsdOutput::kY, types.dtypes[In::kX],
                 dims.shape({"B", "L", "H", "P"}));
  if (ctx.num_outputs() > SsdOutput::kPresentState) {
    ctx.set_output(SsdOutput::kPresentState,
                   state_dtype(types.dtypes[In::kPastState]),
                   dims.shape({"B", "H", "P", "N"}));
  }
  return Status::ok();
}

struct SsdInputs {
  std::vector<double> x, dt, a, b, c, d, z, dt_bias, state;
};

struct StepRule {
  bool softplus;
  double dt_min, dt_max;
};

// One head over the whole sequence; `s` is its P×N state, row-major.
void scan_head(const SsdInputs& in, const SsdDims& dims, const StepRule& rule,
               int64_t batch, int64_t head, double* s, std::vector<double>& y) {
  const int64_t p_size = dims.head_dim;
  const int64_t n_size = dims.state;
  const int64_t g = head / (dims.heads / dims.groups);
  for (int64_t t = 0; t < dims.length; ++t) {
    const int64_t token = batch * dims.length + t;
    double dt = in.dt[token * dims.heads + head] +
                (in.dt_bias.empty() ? 0.0 : in.dt_bias[head]);
    if (rule.softplus) dt = mamba_softplus(dt);
    dt = std::min(std::max(dt, rule.dt_min), rule.dt_max);
    const double decay = std::exp(dt * in.a[head]);
    const double* bm = &in.b[(token * dims.groups + g) * n_size];
    const double* cm = &in.c[(token * dims.groups + g) * n_size];
    const int64_t row = (token * dims.heads + head) * p_size;
    for (int64_t p = 0; p < p_size; ++p) {
      const double x = in.x[row + p];
      double* sp = s + p * n_size;
      double out = 0.0;
      for (int64_t n = 0; n < n_size; ++n) {
        sp[n] = decay * sp[n] + dt * x * bm[n];
        out += sp[n] * cm[n];
      }
      if (!in.d.empty()) out += in.d[head] * x;
      if (!in.z.empty()) {
        const double z = in.z[row + p];
        out *= z / (1.0 + std::exp(-z));
      }
      y[row + p] = out;
    }
  }
}

Status run_ssd(KernelContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(SsdDims dims, check_ssd(ctx));
  SEQRT_ASSIGN_OR_RETURN(SsdAttrs attrs, SsdAttrs::from(ctx.node()));
  SsdInputs in{to_f64(ctx.input(In::kX)),        to_f64(ctx.input(In::kDt)),
               to_f64(ctx.input(In::kA)),        to_f64(ctx.input(In::kBm)),
               to_f64(ctx.input(In::kCm)),       to_f64(ctx.input(In::kD)),
               to_f64(ctx.input(In::kZ)),        to_f64(ctx.input(In::kDtBias)),
               to_f64(ctx.input(In::kPastState))};
  const int64_t state_size = dims.head_dim * dims.state;
  if (in.state.empty()) {
    in.state.assign(static_cast<size_t>(dims.batch * dims.heads * state_size),
                    0.0);
  }
  StepRule rule{attrs.dt_softplus, attrs.dt_min, attrs.dt_max};
  std::vector<double> y(in.x.size());
  for (int64_t b = 0; b < dims.batch; ++b) {
    for (int64_t h = 0; h < dims.heads; ++h) {
      double* s = in.state.data() + (b * dims.heads + h) * state_size;
      scan_head(in, dims, rule, b, h, s, y);
    }
  }
  const Tensor& x = *ctx.input(In::kX);
  SEQRT_ASSIGN_OR_RETURN(
      Tensor * y_out, ctx.allocate_output(SsdOutput::kY, x.dtype(), x.dims()));
  store_f64(y, *y_out);
  if (ctx.num_outputs() > SsdOutput::kPresentState) {
    const Tensor* past = ctx.input(In::kPastState);
    SEQRT_ASSIGN_OR_RETURN(
        Tensor * state_out,
        ctx.allocate_output(
            SsdOutput::kPresentState,
            state_dtype(past ? past->dtype() : DType::kUndefined),
            {dims.batch, dims.heads, dims.head_dim, dims.state}));
    store_f64(in.state, *state_out);
  }
  return Status::ok();
}

}  // namespace

Result<SsdDims> check_ssd(const Node& node, const KernelInputTypes& types) {
  SEQRT_RETURN_IF_ERROR(
      check_required_inputs(node, types, kInputNames, In::kD));
  DimBinder dims(node);
  SEQRT_RETURN_IF_ERROR(bind_ssd(node, types, dims));
  return SsdDims{dims.size("B"), dims.size("L"), dims.size("H"),
                 dims.size("P"), dims.size("G"), dims.size("N")};
}

Result<SsdDims> check_ssd(const KernelContext& ctx) {
  SEQRT_RETURN_IF_ERROR(SsdAttrs::from(ctx.node()).status());
  return check_ssd(ctx.node(), kernel_input_types(ctx, In::kCount));
}

Result<SsdAttrs> SsdAttrs::from(const Node& node) {
  SsdAttrs attrs;
  if (const Attribute* a = node.attr(kDtSoftplusName)) {
    attrs.dt_softplus = a->as_int() != 0;
  }
  if (const Attribute* a = node.attr(kDtMinName)) attrs.dt_min = a->as_float();
  if (const Attribute* a = node.attr(kDtMaxName)) attrs.dt_max = a->as_float();
  if (const Attribute* a = node.attr(kChunkSizeName)) {
    attrs.chunk_size = a->as_int();
  }
  if (attrs.chunk_size < 1) {
    return node_error(node, "chunk_size must be at least 1, got {}",
                      attrs.chunk_size);
  }
  if (std::isnan(attrs.dt_min) || std::isnan(attrs.dt_max) ||
      attrs.dt_min > attrs.dt_max) {
    return node_error(node, "dt_min ({}) must not exceed dt_max ({})",
                      attrs.dt_min, attrs.dt_max);
  }
  return attrs;
}

std::vector<AttrSpec> SsdAttrs::specs() {
  return {
      AttrSpec{kDtSoftplusName,
               AttrType::kInt,
               Attribute(kDtSoftplusDefault),
               false,
               {}},
      AttrSpec{
          kDtMinName, AttrType::kFloat, Attribute(kDtMinDefault), false, {}},
      AttrSpec{
          kDtMaxName, AttrType::kFloat, Attribute(kDtMaxDefault), false, {}},
      AttrSpec{kChunkSizeName,
               AttrType::kInt,
               Attribute(kChunkSizeDefault),
               false,
               {}},
  };
}

void register_ssd(OpRegistry& registry) {
  OpSchema s;
  s.domain = kSeqrtDomain;
  s.name = "SSD";
  s.doc = "Mamba-2 scan: h = exp(Δ·A_h)·h + Δ·x⊗B, y = h·C + D·x";
  for (size_t i = 0; i < In::kCount; ++i) {
    s.inputs.push_back({kInputNames[i], i >= In::kD});
  }
  s.outputs = {{"y"}, {"present_state", true}};
  s.attrs = SsdAttrs::specs();
  s.infer = infer_ssd;
  s.reference = run_ssd;
  register_or_die(registry, std::move(s));
}

}  // namespace seqrt
