// CausalConvWithState (ONNX opset 27): a depthwise causal 1-D convolution
// that carries its last k-1 inputs as state, with optional fused SiLU. Each
// channel reads [past_state, input] and convolves with its own k taps.
#include <cmath>

#include "ops/registry.h"
#include "ops/sequence/scan_common.h"
#include "ops/type_support.h"

namespace seqrt {
namespace {

enum Input { kInput, kWeight, kBias, kPastState };

const char* const kInputNames[] = {"input", "weight", "bias", "past_state"};

Status check_dtypes(const OpContext& ctx, const std::vector<DType>& dtypes) {
  SEQRT_RETURN_IF_ERROR(
      check_input_dtype(ctx, "input 'input'", dtypes[kInput], kFloatTypes));
  for (size_t i = 1; i < dtypes.size(); ++i) {
    if (dtypes[i] == DType::kUndefined) continue;
    SEQRT_RETURN_IF_ERROR(
        check_same_dtype(ctx, "input 'input'", dtypes[kInput],
                         fmt::format("input '{}'", kInputNames[i]), dtypes[i]));
  }
  return Status::ok();
}

// The state's length k-1 as a Dim: known when the kernel size is fixed.
Dim state_length(const DimBinder& dims) {
  const Dim k = dims.dim("k");
  if (k.is_fixed()) return Dim(k.value() - 1);
  return dims.dim("k-1");
}

Status check_shapes(const OpContext& ctx, DimBinder& dims,
                    const std::vector<std::optional<Shape>>& shapes) {
  SEQRT_RETURN_IF_ERROR(
      dims.expect("input", shapes[kInput], {"batch_size", "channels", "L"}));
  SEQRT_RETURN_IF_ERROR(
      dims.expect("weight", shapes[kWeight], {"channels", "1", "k"}));
  const Dim one = dims.dim("1");
  if (one.is_fixed() && one.value() != 1) {
    return ctx.error("weight must be (channels,1,k), got {}",
                     shapes[kWeight]->to_string());
  }
  if (dims.size("k") == 0) {
    return ctx.error("weight must be (channels,1,k) with k >= 1, got {}",
                     shapes[kWeight]->to_string());
  }
  SEQRT_RETURN_IF_ERROR(dims.expect("bias", shapes[kBias], {"channels"}));
  const std::optional<Shape>& past = shapes[kPastState];
  if (past.has_value()) {
    // Bind the state's own length first so a wrong one is reported as a
    // shape mismatch against k-1, not silently adopted.
    Dim expected = state_length(dims);
    SEQRT_RETURN_IF_ERROR(
        dims.expect("past_state", past, {"batch_size", "channels", "k-1"}));
    const Dim got = (*past)[2];
    if (expected.is_fixed() && got.is_fixed() &&
        expected.value() != got.value()) {
      return ctx.error(
          "past_state must be (batch_size,channels,k-1) = ({},{},"
          "{}), got {}",
          dims.dim("batch_size").to_string(), dims.dim("channels").to_string(),
          expected.value(), past->to_string());
    }
  }
  return Status::ok();
}

Status infer_causal_conv(InferContext& ctx) {
  std::vector<std::optional<Shape>> shapes;
  std::vector<DType> dtypes;
  for (size_t i = 0; i <= kPastState; ++i) {
    bool present = ctx.has_input(i);
    shapes.push_back(present ? ctx.input_shape(i) : std::nullopt);
    dtypes.push_back(present ? ctx.input_dtype(i) : DType::kUndefined);
  }
  SEQRT_RETURN_IF_ERROR(check_dtypes(ctx, dtypes));
  DimBinder dims(ctx);
  SEQRT_RETURN_IF_ERROR(check_shapes(ctx, dims, shapes));
  ctx.set_output(0, dtypes[kInput],
                 dims.shape({"batch_size", "channels", "L"}));
  if (ctx.num_outputs() > 1) {
    ctx.set_output(1, dtypes[kInput],
                   Shape{dims.dim("batch_size"), dims.dim("channels"),
                         state_length(dims)});
  }
  return Status::ok();
}

Status run_causal_conv(KernelContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(CausalConvDims dims, check_causal_conv(ctx));
  const std::vector<double> x = to_f64(ctx.input(kInput));
  const std::vector<double> w = to_f64(ctx.input(kWeight));
  const std::vector<double> bias = to_f64(ctx.input(kBias));
  const std::vector<double> past = to_f64(ctx.input(kPastState));
  const bool silu = ctx.attr_string("activation") != "none";
  const int64_t k = dims.kernel;
  const int64_t length = dims.length;
  std::vector<double> y(x.size());
  std::vector<double> state(
      static_cast<size_t>(dims.batch * dims.channels * (k - 1)));
  std::vector<double> ext(static_cast<size_t>(k - 1 + length));
  for (int64_t b = 0; b < dims.batch; ++b) {
    for (int64_t c = 0; c < dims.channels; ++c) {
      const int64_t row = b * dims.channels + c;
      // ext = [past_state (or zeros), input], the window the taps slide on.
      for (int64_t i = 0; i < k - 1; ++i) {
        ext[i] = past.empty() ? 0.0 : past[row * (k - 1) + i];
      }
      for (int64_t t = 0; t < length; ++t) {
        ext[k - 1 + t] = x[row * length + t];
      }
      for (int64_t t = 0; t < length; ++t) {
        double out = bias.empty() ? 0.0 : bias[c];
        for (int64_t i = 0; i < k; ++i) out += w[c * k + i] * ext[t + i];
        if (silu) out /= 1.0 + std::exp(-out);
        y[row * length + t] = out;
      }
      for (int64_t i = 0; i < k - 1; ++i) {
        state[row * (k - 1) + i] = ext[length + i];
      }
    }
  }
  const Tensor& input = *ctx.input(kInput);
  SEQRT_ASSIGN_OR_RETURN(Tensor * y_out,
                         ctx.allocate_output(0, input.dtype(), input.dims()));
  store_f64(y, *y_out);
  if (ctx.num_outputs() > 1) {
    SEQRT_ASSIGN_OR_RETURN(
        Tensor * state_out,
        ctx.allocate_output(1, input.dtype(),
                            {dims.batch, dims.channels, k - 1}));
    store_f64(state, *state_out);
  }
  return Status::ok();
}

}  // namespace

Result<CausalConvDims> check_causal_conv(const KernelContext& ctx) {
  KernelInputTypes types = kernel_input_types(ctx, kPastState + 1);
  SEQRT_RETURN_IF_ERROR(check_dtypes(ctx, types.dtypes));
  DimBinder dims(ctx);
  SEQRT_RETURN_IF_ERROR(check_shapes(ctx, dims, types.shapes));
  return CausalConvDims{dims.size("batch_size"), dims.size("channels"),
                        dims.size("L"), dims.size("k")};
}

void register_causal_conv_with_state(OpRegistry& registry) {
  OpSchema s;
  s.name = "CausalConvWithState";
  s.doc = "depthwise causal 1-D convolution carrying its last k-1 inputs";
  s.inputs = {{"input"}, {"weight"}, {"bias", true}, {"past_state", true}};
  s.outputs = {{"output"}, {"present_state", true}};
  s.attrs = {
      AttrSpec{"activation",
               AttrType::kString,
               Attribute(std::string("none")),
               false,
               {"none", "silu", "swish"}},
  };
  s.infer = infer_causal_conv;
  s.reference = run_causal_conv;
  register_or_die(registry, std::move(s));
}

}  // namespace seqrt
