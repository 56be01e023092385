// seqrt::SelectiveScan (Mamba-1, OPS.md): a diagonal state-space scan with
// input-dependent step Δ. The reference follows Mamba's own reference code
// (A by zero-order hold, B by Euler) so real checkpoints load unchanged.
#include <cmath>

#include "ops/sequence/selective_scan.h"

#include "ops/registry.h"

namespace seqrt {
namespace {

using In = SelectiveScanInput;

const char* const kInputNames[In::kCount] = {
    "u", "delta", "A", "Bm", "Cm", "Dskip", "z", "delta_bias", "past_state"};

// Binds B, D, L, N, G; inference reads its output shapes from `dims`.
Status bind_selective_scan(const Node& node, const KernelInputTypes& types,
                           DimBinder& dims) {
  SEQRT_RETURN_IF_ERROR(check_float_inputs(node, types, kInputNames));
  const std::vector<std::optional<Shape>>& shapes = types.shapes;
  // Sizes come from the activations first, so a wrong parameter is the
  // one reported: "A must be (D,N) = (64,16), got (64,8)".
  SEQRT_RETURN_IF_ERROR(dims.expect("u", shapes[In::kU], {"B", "D", "L"}));
  SEQRT_RETURN_IF_ERROR(
      dims.expect("delta", shapes[In::kDelta], {"B", "D", "L"}));
  SEQRT_RETURN_IF_ERROR(
      dims.expect("Bm", shapes[In::kBm], {"B", "G", "N", "L"}));
  SEQRT_RETURN_IF_ERROR(
      dims.expect("Cm", shapes[In::kCm], {"B", "G", "N", "L"}));
  SEQRT_RETURN_IF_ERROR(dims.expect("z", shapes[In::kZ], {"B", "D", "L"}));
  SEQRT_RETURN_IF_ERROR(
      dims.expect("past_state", shapes[In::kPastState], {"B", "D", "N"}));
  SEQRT_RETURN_IF_ERROR(dims.expect("A", shapes[In::kA], {"D", "N"}));
  SEQRT_RETURN_IF_ERROR(dims.expect("Dskip", shapes[In::kDskip], {"D"}));
  SEQRT_RETURN_IF_ERROR(
      dims.expect("delta_bias", shapes[In::kDeltaBias], {"D"}));
  return dims.expect_multiple("D", "G");
}

Status infer_selective_scan(InferContext& ctx) {
  const KernelInputTypes types = infer_input_types(ctx, In::kCount);
  DimBinder dims(ctx.node());
  SEQRT_RETURN_IF_ERROR(bind_selective_scan(ctx.node(), types, dims));
  ctx.set_output(SelectiveScanOutput::kY, types.dtypes[In::kU],
                 dims.shape({"B", "D", "L"}));
  if (ctx.num_outputs() > SelectiveScanOutput::kPresentState) {
    ctx.set_output(SelectiveScanOutput::kPresentState,
                   state_dtype(types.dtypes[In::kPastState]),
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
  ScanInputs in{
      to_f64(ctx.input(In::kU)),        to_f64(ctx.input(In::kDelta)),
      to_f64(ctx.input(In::kA)),        to_f64(ctx.input(In::kBm)),
      to_f64(ctx.input(In::kCm)),       to_f64(ctx.input(In::kDskip)),
      to_f64(ctx.input(In::kZ)),        to_f64(ctx.input(In::kDeltaBias)),
      to_f64(ctx.input(In::kPastState))};
  if (in.state.empty()) {
    in.state.assign(static_cast<size_t>(s.batch * s.channels * s.state), 0.0);
  }
  std::vector<double> y(in.u.size());
  const bool softplus = SelectiveScanAttrs::from(ctx.node()).delta_softplus;
  for (int64_t b = 0; b < s.batch; ++b) {
    for (int64_t d = 0; d < s.channels; ++d) {
      double* h = in.state.data() + (b * s.channels + d) * s.state;
      scan_channel(in, s, softplus, b, d, h, y);
    }
  }
  const Tensor& u = *ctx.input(In::kU);
  SEQRT_ASSIGN_OR_RETURN(
      Tensor * y_out,
      ctx.allocate_output(SelectiveScanOutput::kY, u.dtype(), u.dims()));
  store_f64(y, *y_out);
  if (ctx.num_outputs() > SelectiveScanOutput::kPresentState) {
    const Tensor* past = ctx.input(In::kPastState);
    SEQRT_ASSIGN_OR_RETURN(
        Tensor * state_out,
        ctx.allocate_output(
            SelectiveScanOutput::kPresentState,
            state_dtype(past ? past->dtype() : DType::kUndefined),
            {s.batch, s.channels, s.state}));
    store_f64(in.state, *state_out);
  }
  return Status::ok();
}

}  // namespace

Result<SelectiveScanDims> check_selective_scan(const Node& node,
                                               const KernelInputTypes& types) {
  SEQRT_RETURN_IF_ERROR(
      check_required_inputs(node, types, kInputNames, In::kDskip));
  DimBinder dims(node);
  SEQRT_RETURN_IF_ERROR(bind_selective_scan(node, types, dims));
  return SelectiveScanDims{dims.size("B"), dims.size("D"), dims.size("L"),
                           dims.size("N"), dims.size("G")};
}

Result<SelectiveScanDims> check_selective_scan(const KernelContext& ctx) {
  return check_selective_scan(ctx.node(), kernel_input_types(ctx, In::kCount));
}

SelectiveScanAttrs SelectiveScanAttrs::from(const Node& node) {
  SelectiveScanAttrs attrs;
  if (const Attribute* a = node.attr(kDeltaSoftplusName)) {
    attrs.delta_softplus = a->as_int() != 0;
  }
  return attrs;
}

std::vector<AttrSpec> SelectiveScanAttrs::specs() {
  return {AttrSpec{kDeltaSoftplusName,
                   AttrType::kInt,
                   Attribute(kDeltaSoftplusDefault),
                   false,
                   {}}};
}

void register_selective_scan(OpRegistry& registry) {
  OpSchema s;
  s.domain = kSeqrtDomain;
  s.name = "SelectiveScan";
  s.doc = "Mamba-1 selective scan: h = exp(ΔA)·h + ΔB·u, y = C·h + D·u";
  for (size_t i = 0; i < In::kCount; ++i) {
    s.inputs.push_back({kInputNames[i], i >= In::kDskip});
  }
  s.outputs = {{"y"}, {"present_state", true}};
  s.attrs = SelectiveScanAttrs::specs();
  s.infer = infer_selective_scan;
  s.reference = run_selective_scan;
  register_or_die(registry, std::move(s));
}

}  // namespace seqrt
