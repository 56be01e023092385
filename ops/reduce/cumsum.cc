// CumSum (opset 14): cumulative sum along the axis given by a scalar
// integer input; `exclusive` leaves out the element itself, `reverse` sums
// from the end.
#include <optional>
#include <type_traits>

#include "ops/elementwise/elementwise.h"
#include "ops/registry.h"
#include "ops/type_support.h"
#include "ops/util.h"

namespace seqrt {
namespace {

// ONNX allows u32/u64 too, which seqrt has no dtype for; i8 and u8 are not
// allowed.
constexpr DTypeSet kCumSumTypes =
    kFloatTypes | DTypeSet{DType::kI32, DType::kI64};
constexpr DTypeSet kAxisTypes{DType::kI32, DType::kI64};

// The axis input is 0-D in ONNX; a 1-element 1-D tensor is accepted too, as
// some exporters write one.
Status check_axis_input(const OpContext& ctx, DType dtype,
                        const std::optional<Shape>& shape) {
  SEQRT_RETURN_IF_ERROR(
      check_input_dtype(ctx, "input 'axis'", dtype, kAxisTypes));
  if (!shape.has_value() || shape->rank() == 0) return Status::ok();
  if (shape->rank() == 1 && !((*shape)[0].is_fixed() && (*shape)[0] != 1)) {
    return Status::ok();
  }
  return ctx.error("input 'axis' must be a scalar, got shape {}",
                   shape->to_string());
}

Status infer_cumsum(InferContext& ctx) {
  SEQRT_RETURN_IF_ERROR(
      check_input_dtype(ctx, "input 'x'", ctx.input_dtype(0), kCumSumTypes));
  SEQRT_RETURN_IF_ERROR(
      check_axis_input(ctx, ctx.input_dtype(1), ctx.input_shape(1)));
  const Tensor* axis = ctx.input_value(1);
  const std::optional<Shape>& x = ctx.input_shape(0);
  if (axis != nullptr && x.has_value() && axis->num_elements() == 1) {
    SEQRT_RETURN_IF_ERROR(normalize_axis(ctx, axis->element_i64(0),
                                         static_cast<int64_t>(x->rank()))
                              .status());
  }
  ctx.set_output(0, ctx.input_dtype(0), x);
  return Status::ok();
}

// Runs the scan along `axis` for every line; T is double for float dtypes
// and int64 (wrapping) for integers.
template <typename T>
void scan_lines(const Tensor& x, int64_t axis, bool exclusive, bool reverse,
                Tensor& y) {
  int64_t length = x.dim(axis);
  int64_t inner = strides_of(x.dims())[axis];
  int64_t lines = length == 0 ? 0 : x.num_elements() / length;
  for (int64_t line = 0; line < lines; ++line) {
    int64_t base = (line / inner) * length * inner + line % inner;
    T sum = 0;
    for (int64_t step = 0; step < length; ++step) {
      int64_t k = reverse ? length - 1 - step : step;
      int64_t i = base + k * inner;
      T value;
      if constexpr (std::is_same_v<T, double>) {
        value = x.element_f64(i);
        if (!exclusive) sum += value;
        y.set_element_f64(i, sum);
        if (exclusive) sum += value;
      } else {
        value = x.element_i64(i);
        if (!exclusive) sum = wrapping_add(sum, value);
        y.set_element_i64(i, sum);
        if (exclusive) sum = wrapping_add(sum, value);
      }
    }
  }
}

Status run_cumsum(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  const Tensor& axis_tensor = *ctx.input(1);
  SEQRT_RETURN_IF_ERROR(
      check_input_dtype(ctx, "input 'x'", x.dtype(), kCumSumTypes));
  SEQRT_RETURN_IF_ERROR(
      check_axis_input(ctx, axis_tensor.dtype(), axis_tensor.shape()));
  if (x.rank() == 0) {
    return ctx.error("input 'x' must have rank >= 1, got a scalar");
  }
  SEQRT_ASSIGN_OR_RETURN(int64_t axis,
                         normalize_axis(ctx, axis_tensor.element_i64(0),
                                        static_cast<int64_t>(x.rank())));
  SEQRT_ASSIGN_OR_RETURN(Tensor * y,
                         ctx.allocate_output(0, x.dtype(), x.dims()));
  bool exclusive = ctx.attr_int("exclusive") != 0;
  bool reverse = ctx.attr_int("reverse") != 0;
  if (is_float(x.dtype())) {
    scan_lines<double>(x, axis, exclusive, reverse, *y);
  } else {
    scan_lines<int64_t>(x, axis, exclusive, reverse, *y);
  }
  return Status::ok();
}

}  // namespace

void register_cumsum(OpRegistry& registry) {
  OpSchema s;
  s.name = "CumSum";
  s.doc = "cumulative sum along one axis";
  s.inputs = {{"x"}, {"axis"}};
  s.outputs = {{"y"}};
  s.attrs = {
      AttrSpec{"exclusive", AttrType::kInt, Attribute(0), false, {}},
      AttrSpec{"reverse", AttrType::kInt, Attribute(0), false, {}},
  };
  s.infer = infer_cumsum;
  s.reference = run_cumsum;
  register_or_die(registry, std::move(s));
}

}  // namespace seqrt
