// QuantizeLinear and DequantizeLinear (opset 21-25): y = saturate(round(x /
// scale) + zero_point) and y = (x - zero_point) * scale, per tensor, per
// axis or per block (ScaleLayout). Integers round half to even and clamp to
// the range of y; float8 targets convert as Cast does, with `saturate`, and
// f4e2m1 ones as Cast does (always saturating).
// The quotient and the product are computed in f32 (f64 when the scale is
// f64), as ONNX's reference does.
#include <algorithm>
#include <cmath>

#include "ops/quantize/quantize.h"
#include "ops/registry.h"
#include "ops/type_support.h"

namespace seqrt {
namespace {

constexpr DTypeSet kQuantizedTypes =
    DTypeSet{DType::kI8, DType::kU8} | kQuantizedStorageTypes;
constexpr DTypeSet kScaleTypes{DType::kF32, DType::kF16, DType::kBF16,
                               DType::kF64};

// The quantized dtype: the zero point's, else `output_dtype`, else u8.
Result<DType> quantized_dtype(const OpContext& ctx, bool has_zero_point,
                              DType zero_point) {
  const int64_t code = ctx.attr_int("output_dtype");
  if (has_zero_point) {
    if (code != 0) {
      SEQRT_ASSIGN_OR_RETURN(DType named,
                             dtype_from_onnx_code(ctx, "output_dtype", code));
      if (named != zero_point) {
        return ctx.error("output_dtype is {} but y_zero_point is {}",
                         dtype_name(named), dtype_name(zero_point));
      }
    }
    return zero_point;
  }
  if (code == 0) return DType::kU8;
  return dtype_from_onnx_code(ctx, "output_dtype", code);
}

Status infer_quantize_linear(InferContext& ctx) {
  SEQRT_RETURN_IF_ERROR(check_input_dtype(ctx, "input 'x'", ctx.input_dtype(0),
                                          kScaleTypes | DTypeSet{DType::kI32}));
  SEQRT_RETURN_IF_ERROR(check_input_dtype(ctx, "input 'y_scale'",
                                          ctx.input_dtype(1), kScaleTypes));
  SEQRT_ASSIGN_OR_RETURN(
      DType y, quantized_dtype(
                   ctx, ctx.has_input(2),
                   ctx.has_input(2) ? ctx.input_dtype(2) : DType::kUndefined));
  SEQRT_RETURN_IF_ERROR(
      check_input_dtype(ctx, "output 'y'", y, kQuantizedTypes));
  ctx.set_output(0, y, ctx.input_shape(0));
  return Status::ok();
}

double quotient(const Tensor& x, int64_t i, const Tensor& scale, int64_t s) {
  if (scale.dtype() == DType::kF64) {
    return x.element_f64(i) / scale.element_f64(s);
  }
  return static_cast<float>(x.element_f64(i)) /
         static_cast<float>(scale.element_f64(s));
}

}  // namespace

Status run_quantize_linear(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  const Tensor& scale = *ctx.input(1);
  const Tensor* zero_point = ctx.has_input(2) ? ctx.input(2) : nullptr;
  SEQRT_ASSIGN_OR_RETURN(
      DType to,
      quantized_dtype(ctx, zero_point != nullptr,
                      zero_point ? zero_point->dtype() : DType::kUndefined));
  SEQRT_RETURN_IF_ERROR(
      check_input_dtype(ctx, "output 'y'", to, kQuantizedTypes));
  SEQRT_ASSIGN_OR_RETURN(
      ScaleLayout layout,
      ScaleLayout::make(ctx, x.dims(), scale.dims(), ctx.attr_int("axis"),
                        ctx.attr_int("block_size")));
  // Same count: ONNX writers give a per-tensor zero point as (1) beside a
  // scalar scale.
  if (zero_point != nullptr &&
      zero_point->num_elements() != scale.num_elements()) {
    return ctx.error(
        "y_zero_point {} must have as many elements as "
        "y_scale {}",
        dims_to_string(zero_point->dims()), dims_to_string(scale.dims()));
  }
  SEQRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, to, x.dims()));
  const bool saturate = ctx.attr_int("saturate") != 0;
  auto* bytes = static_cast<uint8_t*>(y->mutable_data());
  const double lo = static_cast<double>(integer_lowest(to));
  const double hi = static_cast<double>(integer_highest(to));
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    const int64_t s = layout.index(i);
    const double q = quotient(x, i, scale, s);
    const double zp = zero_point ? zero_point->element_f64(s) : 0.0;
    if (is_float8(to)) {
      bytes[i] = f64_to_f8(to, static_cast<float>(q + zp), saturate);
      continue;
    }
    if (to == DType::kF4E2M1) {  // rounds and saturates as Cast does
      y->set_element_f64(i, static_cast<float>(q + zp));
      continue;
    }
    const double rounded = std::isnan(q) ? zp : std::nearbyint(q) + zp;
    y->set_element_i64(i, static_cast<int64_t>(std::clamp(rounded, lo, hi)));
  }
  return Status::ok();
}

namespace {

Status infer_dequantize_linear(InferContext& ctx) {
  SEQRT_RETURN_IF_ERROR(
      check_input_dtype(ctx, "input 'x'", ctx.input_dtype(0),
                        kQuantizedTypes | DTypeSet{DType::kI32}));
  SEQRT_RETURN_IF_ERROR(check_input_dtype(ctx, "input 'x_scale'",
                                          ctx.input_dtype(1), kScaleTypes));
  if (ctx.has_input(2)) {
    SEQRT_RETURN_IF_ERROR(check_same_dtype(ctx, "input 'x'", ctx.input_dtype(0),
                                           "input 'x_zero_point'",
                                           ctx.input_dtype(2)));
  }
  DType out = ctx.input_dtype(1);
  if (ctx.attr_int("output_dtype") != 0) {
    SEQRT_ASSIGN_OR_RETURN(out,
                           dtype_from_onnx_code(ctx, "output_dtype",
                                                ctx.attr_int("output_dtype")));
    SEQRT_RETURN_IF_ERROR(
        check_input_dtype(ctx, "output 'y'", out, kScaleTypes));
  }
  ctx.set_output(0, out, ctx.input_shape(0));
  return Status::ok();
}

}  // namespace

Status run_dequantize_linear(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  const Tensor& scale = *ctx.input(1);
  const Tensor* zero_point = ctx.has_input(2) ? ctx.input(2) : nullptr;
  // Same count: ONNX writers give a per-tensor zero point as (1) beside a
  // scalar scale.
  if (zero_point != nullptr &&
      zero_point->num_elements() != scale.num_elements()) {
    return ctx.error(
        "x_zero_point {} must have as many elements as "
        "x_scale {}",
        dims_to_string(zero_point->dims()), dims_to_string(scale.dims()));
  }
  SEQRT_ASSIGN_OR_RETURN(
      ScaleLayout layout,
      ScaleLayout::make(ctx, x.dims(), scale.dims(), ctx.attr_int("axis"),
                        ctx.attr_int("block_size")));
  DType out = scale.dtype();
  if (ctx.attr_int("output_dtype") != 0) {
    SEQRT_ASSIGN_OR_RETURN(out,
                           dtype_from_onnx_code(ctx, "output_dtype",
                                                ctx.attr_int("output_dtype")));
  }
  SEQRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, out, x.dims()));
  const bool wide = out == DType::kF64 || scale.dtype() == DType::kF64;
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    const int64_t s = layout.index(i);
    // Integer differences are exact; float8 values are exact in f32.
    const double centered =
        x.element_f64(i) - (zero_point ? zero_point->element_f64(s) : 0.0);
    const double value =
        wide ? centered * scale.element_f64(s)
             : static_cast<double>(static_cast<float>(centered) *
                                   static_cast<float>(scale.element_f64(s)));
    y->set_element_f64(i, value);
  }
  return Status::ok();
}

void register_quantize_linear(OpRegistry& registry) {
  OpSchema q;
  q.name = "QuantizeLinear";
  q.doc = "y = saturate(round(x / y_scale) + y_zero_point)";
  q.inputs = {{"x"}, {"y_scale"}, {"y_zero_point", true}};
  q.outputs = {{"y"}};
  q.attrs = {
      AttrSpec{"axis", AttrType::kInt, Attribute(1), false, {}},
      AttrSpec{"block_size", AttrType::kInt, Attribute(0), false, {}},
      AttrSpec{"output_dtype", AttrType::kInt, Attribute(0), false, {}},
      AttrSpec{"saturate", AttrType::kInt, Attribute(1), false, {}},
      // ONNX 25: the dtype of the division; seqrt divides in f32 (f64 for
      // an f64 scale) whatever it names.
      AttrSpec{"precision", AttrType::kInt, Attribute(0), false, {}},
  };
  q.infer = infer_quantize_linear;
  q.reference = run_quantize_linear;
  q.storage_only_types = true;
  register_or_die(registry, std::move(q));

  OpSchema dq;
  dq.name = "DequantizeLinear";
  dq.doc = "y = (x - x_zero_point) * x_scale";
  dq.inputs = {{"x"}, {"x_scale"}, {"x_zero_point", true}};
  dq.outputs = {{"y"}};
  dq.attrs = {
      AttrSpec{"axis", AttrType::kInt, Attribute(1), false, {}},
      AttrSpec{"block_size", AttrType::kInt, Attribute(0), false, {}},
      AttrSpec{"output_dtype", AttrType::kInt, Attribute(0), false, {}},
  };
  dq.infer = infer_dequantize_linear;
  dq.reference = run_dequantize_linear;
  dq.storage_only_types = true;
  register_or_die(registry, std::move(dq));
}

}  // namespace seqrt
