// DynamicQuantizeLinear (opset 11): quantizes f32 x to u8 with a scale and
// zero point computed from x's range widened to include 0:
//   scale = (max(0, max x) - min(0, min x)) / 255
//   zero_point = round(clamp(-min(0, min x) / scale, 0, 255))
//   y = clamp(round(x / scale) + zero_point, 0, 255)
// in f32, rounding half to even. An all-zero x (scale 0) gives scale 0,
// zero point 0 and y 0.
#include <algorithm>
#include <cmath>

#include "ops/quantize/quantize.h"
#include "ops/registry.h"
#include "ops/type_support.h"

namespace seqrt {
namespace {

Status infer_dynamic_quantize_linear(InferContext& ctx) {
  SEQRT_RETURN_IF_ERROR(check_input_dtype(ctx, "input 'x'", ctx.input_dtype(0),
                                          DTypeSet{DType::kF32}));
  ctx.set_output(0, DType::kU8, ctx.input_shape(0));
  ctx.set_output(1, DType::kF32, Shape());
  ctx.set_output(2, DType::kU8, Shape());
  return Status::ok();
}

}  // namespace

Status run_dynamic_quantize_linear(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  const float* in = x.data_as<float>();
  float lo = 0.0f, hi = 0.0f;
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    lo = std::min(lo, in[i]);
    hi = std::max(hi, in[i]);
  }
  const float scale = (hi - lo) / 255.0f;
  float zero_point = 0.0f;
  if (scale != 0.0f) {
    zero_point = std::nearbyint(std::clamp(-lo / scale, 0.0f, 255.0f));
  }
  SEQRT_ASSIGN_OR_RETURN(Tensor * y,
                         ctx.allocate_output(0, DType::kU8, x.dims()));
  auto* out = y->mutable_data_as<uint8_t>();
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    const float q = scale == 0.0f ? 0.0f : std::nearbyint(in[i] / scale);
    out[i] = static_cast<uint8_t>(std::clamp(q + zero_point, 0.0f, 255.0f));
  }
  SEQRT_ASSIGN_OR_RETURN(Tensor * y_scale,
                         ctx.allocate_output(1, DType::kF32, {}));
  y_scale->mutable_data_as<float>()[0] = scale;
  SEQRT_ASSIGN_OR_RETURN(Tensor * y_zero_point,
                         ctx.allocate_output(2, DType::kU8, {}));
  y_zero_point->mutable_data_as<uint8_t>()[0] =
      static_cast<uint8_t>(zero_point);
  return Status::ok();
}

void register_dynamic_quantize_linear(OpRegistry& registry) {
  OpSchema s;
  s.name = "DynamicQuantizeLinear";
  s.doc = "x to u8 with a scale and zero point from x's range";
  s.inputs = {{"x"}};
  s.outputs = {{"y"}, {"y_scale"}, {"y_zero_point"}};
  s.infer = infer_dynamic_quantize_linear;
  s.reference = run_dynamic_quantize_linear;
  register_or_die(registry, std::move(s));
}

}  // namespace seqrt
