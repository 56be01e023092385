// seqrt::SSD (Mamba-2 state-space duality, OPS.md): per head a scalar decay
// exp(Δ·A_h) of a P×N state. The reference is the recurrent form, token by
// token; the chunked form is a backend's business and must equal it.
#include <cmath>
#include <limits>

#include "ops/registry.h"
#include "ops/sequence/scan_common.h"
#include "ops/type_support.h"

namespace seqrt {
namespace {

enum Input { kX, kDt, kA, kB, kC, kD, kZ, kDtBias, kPastState };

const char* const kInputNames[] = {"x", "dt", "A",       "Bm",        "Cm",
                                   "D", "z",  "dt_bias", "past_state"};

Status check_shapes(DimBinder& dims,
                    const std::vector<std::optional<Shape>>& shapes) {
  SEQRT_RETURN_IF_ERROR(dims.expect("x", shapes[kX], {"B", "L", "H", "P"}));
  SEQRT_RETURN_IF_ERROR(dims.expect("dt", shapes[kDt], {"B", "L", "H"}));
  SEQRT_RETURN_IF_ERROR(dims.expect("A", shapes[kA], {"H"}));
  SEQRT_RETURN_IF_ERROR(dims.expect("Bm", shapes[kB], {"B", "L", "G", "N"}));
  SEQRT_RETURN_IF_ERROR(dims.expect("Cm", shapes[kC], {"B", "L", "G", "N"}));
  SEQRT_RETURN_IF_ERROR(dims.expect("D", shapes[kD], {"H"}));
  SEQRT_RETURN_IF_ERROR(dims.expect("z", shapes[kZ], {"B", "L", "H", "P"}));
  SEQRT_RETURN_IF_ERROR(dims.expect("dt_bias", shapes[kDtBias], {"H"}));
  SEQRT_RETURN_IF_ERROR(
      dims.expect("past_state", shapes[kPastState], {"B", "H", "P", "N"}));
  return dims.expect_multiple("H", "G");
}

Status check_attrs_and_dtypes(const OpContext& ctx,
                              const std::vector<DType>& dtypes) {
  for (size_t i = 0; i < dtypes.size(); ++i) {
    if (dtypes[i] == DType::kUndefined) continue;
    SEQRT_RETURN_IF_ERROR(
        check_input_dtype(ctx, fmt::format("input '{}'", kInputNames[i]),
                          dtypes[i], kFloatTypes));
  }
  if (ctx.attr_int("chunk_size") < 1) {
    return ctx.error("chunk_size must be at least 1, got {}",
                     ctx.attr_int("chunk_size"));
  }
  const float dt_min = ctx.attr_float("dt_min");
  const float dt_max = ctx.attr_float("dt_max");
  if (std::isnan(dt_min) || std::isnan(dt_max) || dt_min > dt_max) {
    return ctx.error("dt_min ({}) must not exceed dt_max ({})", dt_min, dt_max);
  }
  return Status::ok();
}

Status infer_ssd(InferContext& ctx) {
  std::vector<std::optional<Shape>> shapes;
  std::vector<DType> dtypes;
  for (size_t i = 0; i <= kPastState; ++i) {
    bool present = ctx.has_input(i);
    shapes.push_back(present ? ctx.input_shape(i) : std::nullopt);
    dtypes.push_back(present ? ctx.input_dtype(i) : DType::kUndefined);
  }
  SEQRT_RETURN_IF_ERROR(check_attrs_and_dtypes(ctx, dtypes));
  DimBinder dims(ctx);
  SEQRT_RETURN_IF_ERROR(check_shapes(dims, shapes));
  ctx.set_output(0, dtypes[kX], dims.shape({"B", "L", "H", "P"}));
  if (ctx.num_outputs() > 1) {
    ctx.set_output(1, state_dtype(dtypes[kPastState]),
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
  SsdInputs in{to_f64(ctx.input(kX)),        to_f64(ctx.input(kDt)),
               to_f64(ctx.input(kA)),        to_f64(ctx.input(kB)),
               to_f64(ctx.input(kC)),        to_f64(ctx.input(kD)),
               to_f64(ctx.input(kZ)),        to_f64(ctx.input(kDtBias)),
               to_f64(ctx.input(kPastState))};
  const int64_t state_size = dims.head_dim * dims.state;
  if (in.state.empty()) {
    in.state.assign(static_cast<size_t>(dims.batch * dims.heads * state_size),
                    0.0);
  }
  StepRule rule{ctx.attr_int("dt_softplus") != 0, ctx.attr_float("dt_min"),
                ctx.attr_float("dt_max")};
  std::vector<double> y(in.x.size());
  for (int64_t b = 0; b < dims.batch; ++b) {
    for (int64_t h = 0; h < dims.heads; ++h) {
      double* s = in.state.data() + (b * dims.heads + h) * state_size;
      scan_head(in, dims, rule, b, h, s, y);
    }
  }
  const Tensor& x = *ctx.input(kX);
  SEQRT_ASSIGN_OR_RETURN(Tensor * y_out,
                         ctx.allocate_output(0, x.dtype(), x.dims()));
  store_f64(y, *y_out);
  if (ctx.num_outputs() > 1) {
    const Tensor* past = ctx.input(kPastState);
    SEQRT_ASSIGN_OR_RETURN(
        Tensor * state_out,
        ctx.allocate_output(
            1, state_dtype(past ? past->dtype() : DType::kUndefined),
            {dims.batch, dims.heads, dims.head_dim, dims.state}));
    store_f64(in.state, *state_out);
  }
  return Status::ok();
}

}  // namespace

Result<SsdDims> check_ssd(const KernelContext& ctx) {
  KernelInputTypes types = kernel_input_types(ctx, kPastState + 1);
  SEQRT_RETURN_IF_ERROR(check_attrs_and_dtypes(ctx, types.dtypes));
  DimBinder dims(ctx);
  SEQRT_RETURN_IF_ERROR(check_shapes(dims, types.shapes));
  return SsdDims{dims.size("B"), dims.size("L"), dims.size("H"),
                 dims.size("P"), dims.size("G"), dims.size("N")};
}

void register_ssd(OpRegistry& registry) {
  OpSchema s;
  s.domain = kSeqrtDomain;
  s.name = "SSD";
  s.doc = "Mamba-2 scan: h = exp(Δ·A_h)·h + Δ·x⊗B, y = h·C + D·x";
  s.inputs = {{"x"},
              {"dt"},
              {"A"},
              {"Bm"},
              {"Cm"},
              {"D", true},
              {"z", true},
              {"dt_bias", true},
              {"past_state", true}};
  s.outputs = {{"y"}, {"present_state", true}};
  s.attrs = {
      AttrSpec{"dt_softplus", AttrType::kInt, Attribute(int64_t{1}), false, {}},
      AttrSpec{"dt_min", AttrType::kFloat, Attribute(0.0f), false, {}},
      AttrSpec{"dt_max",
               AttrType::kFloat,
               Attribute(std::numeric_limits<float>::infinity()),
               false,
               {}},
      AttrSpec{
          "chunk_size", AttrType::kInt, Attribute(int64_t{256}), false, {}},
  };
  s.infer = infer_ssd;
  s.reference = run_ssd;
  register_or_die(registry, std::move(s));
}

}  // namespace seqrt
