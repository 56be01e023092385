// Constant: a tensor given by exactly one of the attributes value,
// value_float, value_floats, value_int, value_ints. Its value is known at
// inference time, so later shape arithmetic can use it.
#include "ops/registry.h"

namespace seqrt {
namespace {

// The value attributes we hold; the ONNX string forms have no seqrt dtype.
const char* const kValueAttrs[] = {"value", "value_float", "value_floats",
                                   "value_int", "value_ints"};
const char* const kStringAttrs[] = {"value_string", "value_strings"};

Result<Tensor> constant_value(const OpContext& ctx) {
  for (const char* name : kStringAttrs) {
    if (ctx.has_attr(name)) {
      return ctx.unsupported_error(
          "attribute '{}': string tensors are not supported", name);
    }
  }
  int set = 0;
  for (const char* name : kValueAttrs) set += ctx.has_attr(name) ? 1 : 0;
  if (set != 1) {
    return ctx.error(
        "exactly one of value, value_float, value_floats, value_int, "
        "value_ints must be set, got {}",
        set);
  }
  if (ctx.has_attr("value")) {
    const Tensor& value = ctx.attr_tensor("value");
    if (value.empty()) return ctx.error("attribute 'value' is an empty tensor");
    return value.clone();
  }
  if (ctx.has_attr("value_float")) {
    return Tensor::scalar<float>(ctx.attr_float("value_float"));
  }
  if (ctx.has_attr("value_int")) {
    return Tensor::scalar<int64_t>(ctx.attr_int("value_int"));
  }
  if (ctx.has_attr("value_floats")) {
    const std::vector<float>& values = ctx.attr_floats("value_floats");
    return Tensor::from_vector<float>({static_cast<int64_t>(values.size())},
                                      values);
  }
  const std::vector<int64_t>& values = ctx.attr_ints("value_ints");
  return Tensor::from_vector<int64_t>({static_cast<int64_t>(values.size())},
                                      values);
}

Status infer_constant(InferContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(Tensor value, constant_value(ctx));
  ctx.set_output(0, value.dtype(), value.shape());
  ctx.set_output_value(0, std::move(value));
  return Status::ok();
}

Status run_constant(KernelContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(Tensor value, constant_value(ctx));
  ctx.set_output(0, std::move(value));
  return Status::ok();
}

}  // namespace

void register_constant(OpRegistry& registry) {
  OpSchema s;
  s.name = "Constant";
  s.doc = "a constant tensor given by one attribute";
  s.outputs = {{"output"}};
  s.attrs = {
      {"value", AttrType::kTensor},
      {"value_float", AttrType::kFloat},
      {"value_floats", AttrType::kFloats},
      {"value_int", AttrType::kInt},
      {"value_ints", AttrType::kInts},
      {"value_string", AttrType::kString},
      {"value_strings", AttrType::kStrings},
  };
  s.infer = infer_constant;
  s.reference = run_constant;
  s.storage_only_types = true;
  register_or_die(registry, std::move(s));
}

}  // namespace seqrt
