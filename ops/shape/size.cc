// Size: the input's element count as an i64 scalar. Like Shape, its value
// is known at inference time when every dim is fixed.
#include "ops/registry.h"

namespace seqrt {
namespace {

Status infer_size(InferContext& ctx) {
  ctx.set_output(0, DType::kI64, Shape());
  const std::optional<Shape>& shape = ctx.input_shape(0);
  if (!shape.has_value()) return Status::ok();
  if (!shape->is_fixed()) {
    DimExpr count = dims_product(shape->dims());
    if (!count.is_unknown()) ctx.set_output_symbolic(0, {count});
    return Status::ok();
  }
  Result<int64_t> count = checked_num_elements(shape->fixed_dims());
  if (!count.is_ok()) {
    return ctx.error("input shape {} is too large: {}", shape->to_string(),
                     count.status().message());
  }
  ctx.set_output_value(0, Tensor::scalar<int64_t>(*count));
  return Status::ok();
}

Status run_size(KernelContext& ctx) {
  ctx.set_output(0, Tensor::scalar<int64_t>(ctx.input(0)->num_elements()));
  return Status::ok();
}

}  // namespace

void register_size(OpRegistry& registry) {
  OpSchema s;
  s.name = "Size";
  s.doc = "the input's number of elements as an i64 scalar";
  s.inputs = {{"data"}};
  s.outputs = {{"size"}};
  s.infer = infer_size;
  s.reference = run_size;
  register_or_die(registry, std::move(s));
}

}  // namespace seqrt
