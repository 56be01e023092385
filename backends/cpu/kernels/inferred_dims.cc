#include "backends/cpu/kernels/inferred_dims.h"

#include "ops/op_schema.h"

namespace seqrt::cpu {

Result<InferContext> infer_on_inputs(const KernelContext& ctx) {
  std::vector<ValueInfo> inputs;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const Tensor* t = ctx.input(i);
    if (t == nullptr) {
      inputs.emplace_back();
      continue;
    }
    inputs.push_back(ValueInfo{t->dtype(), t->shape(), t});
  }
  InferContext infer(ctx.node(), ctx.schema(), std::move(inputs));
  SEQRT_RETURN_IF_ERROR(ctx.schema().infer(infer));
  return infer;
}

Result<std::vector<std::vector<int64_t>>> inferred_output_dims(
    const KernelContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(InferContext infer, infer_on_inputs(ctx));
  std::vector<std::vector<int64_t>> dims;
  for (const ValueInfo& out : infer.outputs()) {
    if (!out.shape.has_value() || !out.shape->is_fixed()) {
      return internal_error("{}: inference left an output shape unknown",
                            ctx.node().label());
    }
    dims.push_back(out.shape->fixed_dims());
  }
  return dims;
}

Result<std::vector<int64_t>> inferred_dims(const KernelContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(auto dims, inferred_output_dims(ctx));
  return dims[0];
}

}  // namespace seqrt::cpu
