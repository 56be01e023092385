// seqrt::SelectiveScan (Mamba-1, OPS.md): a diagonal state-space scan with
// input-dependent step Δ. The reference follows Mamba's own reference code
// (A by zero-order hold, B by Euler) so real checkpoints load unchanged.
#include <cmath>

#include "ops/registry.h"
#include "ops/sequence/scan_common.h"
#include "ops/type_support.h"

namespace seqrt {
namespace {

enum Input { kU, kDelta, kA, kB, kC, kDskip, kZ, kDeltaBias, kPastState };

const char* const kInputNames[] = {
    "u", "delta", "A", "Bm", "Cm", "Dskip", "z", "delta_bias", "past_state"};

Status check_shapes(DimBinder& dims,
                    const std::vector<std::optional<Shape>>& shapes) {
  // Sizes come from the activations first, so a wrong parameter is the
  // one reported: "A must be (D,N) = (64,16), got (64,8)".
  SEQRT_RETURN_IF_ERROR(dims.expect("u", shapes[kU], {"B", "D", "L"}));
  SEQRT_RETURN_IF_ERROR(dims.expect("delta", shapes[kDelta], {"B", "D", "L"}));
  SEQRT_RETURN_IF_ERROR(dims.expect("Bm", shapes[kB], {"B", "G", "N", "L"}));
  SEQRT_RETURN_IF_ERROR(dims.expect("Cm", shapes[kC], {"B", "G", "N", "L"}));
  SEQRT_RETURN_IF_ERROR(dims.expect("z", shapes[kZ], {"B", "D", "L"}));
  SEQRT_RETURN_IF_ERROR(
      dims.expect("past_state", shapes[kPastState], {"B", "D", "N"}));
  SEQRT_RETURN_IF_ERROR(dims.expect("A", shapes[kA], {"D", "N"}));
  SEQRT_RETURN_IF_ERROR(dims.expect("Dskip", shapes[kDskip], {"D"}));
  SEQRT_RETURN_IF_ERROR(dims.expect("delta_bias", shapes[kDeltaBias], {"D"}));
  return dims.expect_multiple("D", "G");
}

Status check_dtypes(const OpContext& ctx, const std::vector<DType>& dtypes) {
  for (size_t i = 0; i < dtypes.size(); ++i) {
    if (dtypes[i] == DType::kUndefined) continue;
    SEQRT_RETURN_IF_ERROR(
        check_input_dtype(ctx, fmt::format("input '{}'", kInputNames[i]),
                          dtypes[i], kFloatTypes));
  }
  return Status::ok();
}

Status infer_selective_scan(InferContext& ctx) {
  std::vector<std::optional<Shape>> shapes;
  std::vector<DType> dtypes;
  for (size_t i = 0; i <= kPastState; ++i) {
    bool present = ctx.has_input(i);
    shapes.push_back(present ? ctx.input_shape(i) : std::nullopt);
    dtypes.push_back(present ? ctx.input_dtype(i) : DType::kUndefined);
  }
  SEQRT_RETURN_IF_ERROR(check_dtypes(ctx, dtypes));
  DimBinder dims(ctx);
  SEQRT_RETURN_IF_ERROR(check_shapes(dims, shapes));
  ctx.set_output(0, dtypes[kU], dims.shape({"B", "D", "L"}));
  if (ctx.num_outputs() > 1) {
    ctx.set_output(1, state_dtype(dtypes[kPastState]),
                   dims.shape({"B", "D", "N"}));
  }
  return Status::ok();
}

// The reference's working copy of the inputs, as doubles.
struct ScanInputs {
  std::vector<double> u, delta, a, b, c, dskip, z, delta_bias, state;
};

// One channel over the whole sequence; `h` holds its N-dim state.
void scan_channel(const ScanInputs& in, const SelectiveScanDims& s,
                  bool softplus, int64_t batch, int64_t d, double* h,
                  std::vector<double>& y) {
  const int64_t n_size = s.state;
  const int64_t g = d / (s.channels / s.groups);
  const int64_t row = (batch * s.channels + d) * s.length;
  const int64_t bc_base = (batch * s.groups + g) * n_size * s.length;
  for (int64_t t = 0; t < s.length; ++t) {
    double dt =
        in.delta[row + t] + (in.delta_bias.empty() ? 0.0 : in.delta_bias[d]);
    if (softplus) dt = mamba_softplus(dt);
    const double u = in.u[row + t];
    double out = 0.0;
    for (int64_t n = 0; n < n_size; ++n) {
      const int64_t bc = bc_base + n * s.length + t;
      h[n] = std::exp(dt * in.a[d * n_size + n]) * h[n] + dt * in.b[bc] * u;
      out += h[n] * in.c[bc];
    }
    if (!in.dskip.empty()) out += in.dskip[d] * u;
    if (!in.z.empty()) {
      const double z = in.z[row + t];
      out *= z / (1.0 + std::exp(-z));
    }
    y[row + t] = out;
  }
}

Status run_selective_scan(KernelContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(SelectiveScanDims s, check_selective_scan(ctx));
  ScanInputs in{to_f64(ctx.input(kU)),        to_f64(ctx.input(kDelta)),
                to_f64(ctx.input(kA)),        to_f64(ctx.input(kB)),
                to_f64(ctx.input(kC)),        to_f64(ctx.input(kDskip)),
                to_f64(ctx.input(kZ)),        to_f64(ctx.input(kDeltaBias)),
                to_f64(ctx.input(kPastState))};
  if (in.state.empty()) {
    in.state.assign(static_cast<size_t>(s.batch * s.channels * s.state), 0.0);
  }
  std::vector<double> y(in.u.size());
  const bool softplus = ctx.attr_int("delta_softplus") != 0;
  for (int64_t b = 0; b < s.batch; ++b) {
    for (int64_t d = 0; d < s.channels; ++d) {
      double* h = in.state.data() + (b * s.channels + d) * s.state;
      scan_channel(in, s, softplus, b, d, h, y);
    }
  }
  const Tensor& u = *ctx.input(kU);
  SEQRT_ASSIGN_OR_RETURN(Tensor * y_out,
                         ctx.allocate_output(0, u.dtype(), u.dims()));
  store_f64(y, *y_out);
  if (ctx.num_outputs() > 1) {
    const Tensor* past = ctx.input(kPastState);
    SEQRT_ASSIGN_OR_RETURN(
        Tensor * state_out,
        ctx.allocate_output(
            1, state_dtype(past ? past->dtype() : DType::kUndefined),
            {s.batch, s.channels, s.state}));
    store_f64(in.state, *state_out);
  }
  return Status::ok();
}

}  // namespace

Result<SelectiveScanDims> check_selective_scan(const KernelContext& ctx) {
  KernelInputTypes types = kernel_input_types(ctx, kPastState + 1);
  SEQRT_RETURN_IF_ERROR(check_dtypes(ctx, types.dtypes));
  DimBinder dims(ctx);
  SEQRT_RETURN_IF_ERROR(check_shapes(dims, types.shapes));
  return SelectiveScanDims{dims.size("B"), dims.size("D"), dims.size("L"),
                           dims.size("N"), dims.size("G")};
}

void register_selective_scan(OpRegistry& registry) {
  OpSchema s;
  s.domain = kSeqrtDomain;
  s.name = "SelectiveScan";
  s.doc = "Mamba-1 selective scan: h = exp(ΔA)·h + ΔB·u, y = C·h + D·u";
  s.inputs = {{"u"},
              {"delta"},
              {"A"},
              {"Bm"},
              {"Cm"},
              {"Dskip", true},
              {"z", true},
              {"delta_bias", true},
              {"past_state", true}};
  s.outputs = {{"y"}, {"present_state", true}};
  s.attrs = {
      AttrSpec{
          "delta_softplus", AttrType::kInt, Attribute(int64_t{1}), false, {}},
  };
  s.infer = infer_selective_scan;
  s.reference = run_selective_scan;
  register_or_die(registry, std::move(s));
}

}  // namespace seqrt
