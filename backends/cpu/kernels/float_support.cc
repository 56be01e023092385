#include "backends/cpu/kernels/float_support.h"

#include "backends/cpu/float_io.h"

namespace seqrt::cpu {

bool is_f32_family(DType dtype) {
  return dtype == DType::kF32 || dtype == DType::kF16 || dtype == DType::kBF16;
}

DType input_dtype(const Graph& graph, const Node& node, size_t i) {
  if (i >= node.inputs.size() || node.inputs[i] == kNoValue) {
    return DType::kUndefined;
  }
  return graph.value(node.inputs[i]).dtype;
}

Status require_f32_family(const Graph& graph, const Node& node,
                          std::initializer_list<size_t> inputs) {
  for (size_t i : inputs) {
    DType dtype = input_dtype(graph, node, i);
    if (dtype == DType::kUndefined || is_f32_family(dtype)) continue;
    return unsupported(
        "{}: {} input: the CPU backend computes f32/f16/bf16 only",
        node.label(), dtype_name(dtype));
  }
  return Status::ok();
}

Status require_all_f32_family(const Graph& graph, const Node& node) {
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    SEQRT_RETURN_IF_ERROR(require_f32_family(graph, node, {i}));
  }
  return Status::ok();
}

Status require_same_float_inputs(const KernelContext& ctx) {
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) return ctx.error("input {} is missing", i);
    DType dtype = ctx.input(i)->dtype();
    if (!is_f32_family(dtype)) {
      return ctx.unsupported_error(
          "{} input: the CPU backend computes f32/f16/bf16 only",
          dtype_name(dtype));
    }
    if (dtype != ctx.input(0)->dtype()) {
      return ctx.error("input {} must be {} like input 0, got {}", i,
                       dtype_name(ctx.input(0)->dtype()), dtype_name(dtype));
    }
  }
  return Status::ok();
}

Result<Tensor> f32_output(KernelContext& ctx, size_t i, DType dtype,
                          std::vector<int64_t> dims) {
  if (dtype != DType::kF32) return Tensor::allocate(DType::kF32, dims);
  SEQRT_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocate_output(i, dtype, std::move(dims)));
  return *out;
}

Status set_output_as(KernelContext& ctx, size_t i, const Tensor& value,
                     DType dtype) {
  const Tensor& current = ctx.outputs()[i];
  if (dtype == value.dtype() && !current.empty() &&
      current.data() == value.data() && current.dims() == value.dims()) {
    return Status::ok();
  }
  SEQRT_ASSIGN_OR_RETURN(Tensor out, store_as(value, dtype));
  ctx.set_output(i, std::move(out));
  return Status::ok();
}

}  // namespace seqrt::cpu
