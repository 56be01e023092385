// Where (opset 16): condition ? X : Y, with all three broadcast together.
#include <cstring>

#include "ops/elementwise/elementwise.h"
#include "ops/registry.h"
#include "ops/symbolic_value.h"
#include "ops/type_support.h"

namespace seqrt {
namespace {

Status check_where_dtypes(const OpContext& ctx, DType condition, DType x,
                          DType y) {
  SEQRT_RETURN_IF_ERROR(
      check_input_dtype(ctx, "input 'condition'", condition, kBoolTypes));
  SEQRT_RETURN_IF_ERROR(check_input_dtype(ctx, "input 'X'", x, kAllTypes));
  return check_same_dtype(ctx, "input 'X'", x, "input 'Y'", y);
}

Status infer_where(InferContext& ctx) {
  SEQRT_RETURN_IF_ERROR(check_where_dtypes(
      ctx, ctx.input_dtype(0), ctx.input_dtype(1), ctx.input_dtype(2)));
  SEQRT_ASSIGN_OR_RETURN(std::optional<Shape> shape,
                         infer_broadcast_shape(ctx));
  ctx.set_output(0, ctx.input_dtype(1), std::move(shape));
  where_symbolic(ctx);
  return Status::ok();
}

Status run_where(KernelContext& ctx) {
  const Tensor& condition = *ctx.input(0);
  const Tensor& x = *ctx.input(1);
  const Tensor& y = *ctx.input(2);
  SEQRT_RETURN_IF_ERROR(
      check_where_dtypes(ctx, condition.dtype(), x.dtype(), y.dtype()));
  SEQRT_ASSIGN_OR_RETURN(BroadcastLoop loop, BroadcastLoop::create(ctx));
  SEQRT_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocate_output(0, x.dtype(), loop.out_dims()));
  // A selection moves elements unchanged, so copy their bytes: exact for
  // every dtype, NaN payloads included.
  size_t size = dtype_size(x.dtype());
  auto* out_bytes = static_cast<uint8_t*>(out->mutable_data());
  for (int64_t i = 0; i < loop.num_elements(); ++i) {
    bool take_x = condition.element_i64(loop.index(0, i)) != 0;
    const Tensor& source = take_x ? x : y;
    int64_t index = loop.index(take_x ? 1 : 2, i);
    std::memcpy(out_bytes + i * size,
                static_cast<const uint8_t*>(source.data()) + index * size,
                size);
  }
  return Status::ok();
}

}  // namespace

void register_where(OpRegistry& registry) {
  OpSchema s;
  s.name = "Where";
  s.doc = "condition ? X : Y, elementwise with numpy broadcasting";
  s.inputs = {{"condition"}, {"X"}, {"Y"}};
  s.outputs = {{"output"}};
  s.infer = infer_where;
  s.reference = run_where;
  register_or_die(registry, std::move(s));
}

}  // namespace seqrt
