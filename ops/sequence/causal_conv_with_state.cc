// CausalConvWithState (ONNX opset 27): a depthwise causal 1-D convolution
// that carries its last k-1 inputs as state, with optional fused SiLU. Each
// channel reads [past_state, input] and convolves with its own k taps.
#include "ops/sequence/causal_conv_with_state.h"

#include <algorithm>
#include <cmath>
#include <iterator>

#include "ops/registry.h"
#include "ops/type_support.h"

namespace seqrt {
namespace {

using In = CausalConvInput;

const char* const kInputNames[In::kCount] = {"input", "weight", "bias",
                                             "past_state"};

// The input is a float type; the others have its dtype.
Status check_dtypes(const Node& node, const std::vector<DType>& dtypes) {
  const DType input = dtypes[In::kInput];
  if (!kFloatTypes.contains(input)) {
    return node_error(node, "input 'input' must be {}, got {}",
                      kFloatTypes.to_string(), dtype_name(input));
  }
  for (size_t i = 1; i < dtypes.size(); ++i) {
    if (dtypes[i] == DType::kUndefined || dtypes[i] == input) continue;
    return node_error(node,
                      "input 'input' and input '{}' must have the same dtype, "
                      "got {} and {}",
                      kInputNames[i], dtype_name(input), dtype_name(dtypes[i]));
  }
  return Status::ok();
}

// The state's length k-1 as a Dim: known when the kernel size is fixed.
Dim state_length(const DimBinder& dims) {
  const Dim k = dims.dim("k");
  if (k.is_fixed()) return Dim(k.value() - 1);
  return dims.dim("k-1");
}

// Binds batch_size, channels, L, k; inference reads its output shapes from
// `dims`.
Status bind_causal_conv(const Node& node, const KernelInputTypes& types,
                        DimBinder& dims) {
  SEQRT_RETURN_IF_ERROR(check_dtypes(node, types.dtypes));
  const std::vector<std::optional<Shape>>& shapes = types.shapes;
  SEQRT_RETURN_IF_ERROR(dims.expect("input", shapes[In::kInput],
                                    {"batch_size", "channels", "L"}));
  SEQRT_RETURN_IF_ERROR(
      dims.expect("weight", shapes[In::kWeight], {"channels", "1", "k"}));
  const Dim one = dims.dim("1");
  if (one.is_fixed() && one.value() != 1) {
    return node_error(node, "weight must be (channels,1,k), got {}",
                      shapes[In::kWeight]->to_string());
  }
  if (dims.size("k") == 0) {
    return node_error(node, "weight must be (channels,1,k) with k >= 1, got {}",
                      shapes[In::kWeight]->to_string());
  }
  SEQRT_RETURN_IF_ERROR(dims.expect("bias", shapes[In::kBias], {"channels"}));
  const std::optional<Shape>& past = shapes[In::kPastState];
  if (past.has_value()) {
    // Bind the state's own length first so a wrong one is reported as a
    // shape mismatch against k-1, not silently adopted.
    Dim expected = state_length(dims);
    SEQRT_RETURN_IF_ERROR(
        dims.expect("past_state", past, {"batch_size", "channels", "k-1"}));
    const Dim got = (*past)[2];
    if (expected.is_fixed() && got.is_fixed() &&
        expected.value() != got.value()) {
      return node_error(node,
                        "past_state must be (batch_size,channels,k-1) = ({},{},"
                        "{}), got {}",
                        dims.dim("batch_size").to_string(),
                        dims.dim("channels").to_string(), expected.value(),
                        past->to_string());
    }
  }
  return Status::ok();
}

Status infer_causal_conv(InferContext& ctx) {
  const KernelInputTypes types = infer_input_types(ctx, In::kCount);
  DimBinder dims(ctx.node());
  SEQRT_RETURN_IF_ERROR(bind_causal_conv(ctx.node(), types, dims));
  ctx.set_output(CausalConvOutput::kOutput, types.dtypes[In::kInput],
                 dims.shape({"batch_size", "channels", "L"}));
  if (ctx.num_outputs() > CausalConvOutput::kPresentState) {
    ctx.set_output(CausalConvOutput::kPresentState, types.dtypes[In::kInput],
                   Shape{dims.dim("batch_size"), dims.dim("channels"),
                         state_length(dims)});
  }
  return Status::ok();
}

Status run_causal_conv(KernelContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(CausalConvDims dims, check_causal_conv(ctx));
  const std::vector<double> x = to_f64(ctx.input(In::kInput));
  const std::vector<double> w = to_f64(ctx.input(In::kWeight));
  const std::vector<double> bias = to_f64(ctx.input(In::kBias));
  const std::vector<double> past = to_f64(ctx.input(In::kPastState));
  SEQRT_ASSIGN_OR_RETURN(CausalConvAttrs attrs,
                         CausalConvAttrs::from(ctx.node()));
  const bool silu = attrs.silu;
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
  const Tensor& input = *ctx.input(In::kInput);
  SEQRT_ASSIGN_OR_RETURN(Tensor * y_out,
                         ctx.allocate_output(CausalConvOutput::kOutput,
                                             input.dtype(), input.dims()));
  store_f64(y, *y_out);
  if (ctx.num_outputs() > CausalConvOutput::kPresentState) {
    SEQRT_ASSIGN_OR_RETURN(
        Tensor * state_out,
        ctx.allocate_output(CausalConvOutput::kPresentState, input.dtype(),
                            {dims.batch, dims.channels, k - 1}));
    store_f64(state, *state_out);
  }
  return Status::ok();
}

}  // namespace

Result<CausalConvDims> check_causal_conv(const Node& node,
                                         const KernelInputTypes& types) {
  SEQRT_RETURN_IF_ERROR(
      check_required_inputs(node, types, kInputNames, In::kBias));
  DimBinder dims(node);
  SEQRT_RETURN_IF_ERROR(bind_causal_conv(node, types, dims));
  return CausalConvDims{dims.size("batch_size"), dims.size("channels"),
                        dims.size("L"), dims.size("k")};
}

Result<CausalConvDims> check_causal_conv(const KernelContext& ctx) {
  return check_causal_conv(ctx.node(), kernel_input_types(ctx, In::kCount));
}

namespace {
const char* const kActivations[] = {"none", "silu", "swish"};
}  // namespace

Result<CausalConvAttrs> CausalConvAttrs::from(const Node& node) {
  CausalConvAttrs attrs;
  const Attribute* a = node.attr(kActivationName);
  const std::string activation = a ? a->as_string() : kActivationDefault;
  if (std::find(std::begin(kActivations), std::end(kActivations), activation) ==
      std::end(kActivations)) {
    return node_error(node, "activation must be none, silu or swish, got '{}'",
                      activation);
  }
  attrs.silu = activation != "none";
  return attrs;
}

std::vector<AttrSpec> CausalConvAttrs::specs() {
  return {AttrSpec{kActivationName,
                   AttrType::kString,
                   Attribute(kActivationDefault),
                   false,
                   {std::begin(kActivations), std::end(kActivations)}}};
}

void register_causal_conv_with_state(OpRegistry& registry) {
  OpSchema s;
  s.name = "CausalConvWithState";
  s.doc = "depthwise causal 1-D convolution carrying its last k-1 inputs";
  for (size_t i = 0; i < In::kCount; ++i) {
    s.inputs.push_back({kInputNames[i], i >= In::kBias});
  }
  s.outputs = {{"output"}, {"present_state", true}};
  s.attrs = CausalConvAttrs::specs();
  s.infer = infer_causal_conv;
  s.reference = run_causal_conv;
  register_or_die(registry, std::move(s));
}

}  // namespace seqrt
