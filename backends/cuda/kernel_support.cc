#include "backends/cuda/kernel_support.h"

#include "ops/op_schema.h"

namespace seqrt::cuda {
namespace {

Status check_f32(const Graph& graph, const Node& node, ValueId id) {
  if (id == kNoValue) return Status::ok();
  DType dtype = graph.value(id).dtype;
  if (dtype == DType::kF32) return Status::ok();
  return unsupported(
      "{}: the cuda backend runs this op in f32 only, '{}' is {}", node.label(),
      graph.value(id).name, dtype_name(dtype));
}

}  // namespace

Status all_f32(const Graph& graph, const Node& node) {
  for (const std::vector<ValueId>* ids : {&node.inputs, &node.outputs}) {
    for (ValueId id : *ids) SEQRT_RETURN_IF_ERROR(check_f32(graph, node, id));
  }
  return Status::ok();
}

Status data_f32(const Graph& graph, const Node& node) {
  if (!node.inputs.empty()) {
    SEQRT_RETURN_IF_ERROR(check_f32(graph, node, node.inputs[0]));
  }
  for (ValueId id : node.outputs) {
    SEQRT_RETURN_IF_ERROR(check_f32(graph, node, id));
  }
  return Status::ok();
}

Status any_dtype(const Graph&, const Node&) { return Status::ok(); }

int64_t int_attr(const Node& node, const char* name, int64_t fallback) {
  const Attribute* attr = node.attr(name);
  return attr != nullptr ? attr->as_int() : fallback;
}

bool wants_output(const KernelContext& ctx, size_t i) {
  return i < ctx.num_outputs() && ctx.node().outputs[i] != kNoValue;
}

Status plan_error(const KernelContext& ctx, const Status& status) {
  return Status(status.code(), ctx.node().label() + ": " + status.message());
}

Result<OutputTypes> infer_outputs(const KernelContext& ctx) {
  std::vector<ValueInfo> inputs(ctx.num_inputs());
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const Tensor* tensor = ctx.input(i);
    if (tensor == nullptr) continue;
    inputs[i] =
        ValueInfo{tensor->dtype(), Shape::from_dims(tensor->dims()), tensor};
  }
  InferContext infer(ctx.node(), ctx.schema(), std::move(inputs));
  SEQRT_RETURN_IF_ERROR(ctx.schema().infer(infer));
  OutputTypes types;
  for (size_t i = 0; i < infer.num_outputs(); ++i) {
    const ValueInfo& out = infer.outputs()[i];
    std::vector<int64_t> dims;
    if (out.shape.has_value()) {
      for (const Dim& dim : out.shape->dims()) {
        if (!dim.is_fixed()) break;
        dims.push_back(dim.value());
      }
    }
    if (!out.shape.has_value() || dims.size() != out.shape->rank()) {
      return ctx.unsupported_error(
          "the cuda backend needs output {}'s shape from the inputs", i);
    }
    types.dims.push_back(std::move(dims));
    types.dtypes.push_back(out.dtype);
  }
  return types;
}

}  // namespace seqrt::cuda
