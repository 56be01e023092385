// ConstantOfShape: a tensor of the shape given by a 1-D integer input,
// filled with the one element of attribute `value` (default f32 0), whose
// dtype the output takes.
#include "ops/registry.h"
#include "ops/shape/shape_util.h"
#include "ops/symbolic_value.h"

namespace seqrt {
namespace {

Result<const Tensor*> fill_value(const OpContext& ctx) {
  const Tensor& value = ctx.attr_tensor("value");
  if (value.empty() || value.num_elements() != 1) {
    return ctx.error("attribute 'value' must hold one element, got {}",
                     value.empty() ? std::string("no tensor")
                                   : dims_to_string(value.dims()));
  }
  return &value;
}

Status check_dims(const OpContext& ctx, const std::vector<int64_t>& dims) {
  for (int64_t dim : dims) {
    if (dim < 0) {
      return ctx.error("shape {} has a negative dim", dims_to_string(dims));
    }
  }
  return Status::ok();
}

Status infer_constant_of_shape(InferContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(const Tensor* value, fill_value(ctx));
  SEQRT_ASSIGN_OR_RETURN(auto dims, known_int_list(ctx, 0, "input 'input'"));
  if (dims) {
    SEQRT_RETURN_IF_ERROR(check_dims(ctx, *dims));
    ctx.set_output(0, value->dtype(), Shape::from_dims(*dims));
  } else if (std::optional<std::vector<Dim>> symbolic =
                 symbolic_shape_input(ctx, 0)) {
    ctx.set_output(0, value->dtype(), Shape(std::move(*symbolic)));
  } else if (std::optional<int64_t> rank = known_length(ctx, 0)) {
    ctx.set_output(0, value->dtype(), unknown_shape(*rank));
  } else {
    ctx.set_output(0, value->dtype(), std::nullopt);
  }
  return Status::ok();
}

Status run_constant_of_shape(KernelContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(const Tensor* value, fill_value(ctx));
  SEQRT_ASSIGN_OR_RETURN(std::vector<int64_t> dims,
                         read_int_list(ctx, *ctx.input(0), "input 'input'"));
  SEQRT_RETURN_IF_ERROR(check_dims(ctx, dims));
  SEQRT_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocate_output(0, value->dtype(), dims));
  for (int64_t i = 0; i < out->num_elements(); ++i) {
    copy_elements(*value, 0, *out, i);
  }
  return Status::ok();
}

}  // namespace

void register_constant_of_shape(OpRegistry& registry) {
  OpSchema s;
  s.name = "ConstantOfShape";
  s.doc = "a tensor of the given shape filled with one value";
  s.inputs = {{"input"}};
  s.outputs = {{"output"}};
  s.attrs = {{"value", AttrType::kTensor,
              Attribute(Tensor::from_vector<float>({1}, {0.0f}))}};
  s.infer = infer_constant_of_shape;
  s.reference = run_constant_of_shape;
  register_or_die(registry, std::move(s));
}

}  // namespace seqrt
