// CPU kernel of Shape, Size and Constant: their values depend only on
// shapes and attributes, and their own inference computes them (it records
// them for constant folding), so the kernel takes that value.
#include <vector>

#include "backends/cpu/kernel_table.h"
#include "backends/cpu/kernels/inferred_dims.h"
#include "ops/op_schema.h"

namespace seqrt::cpu {
namespace {

Status run_from_inferred_value(KernelContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(InferContext infer, infer_on_inputs(ctx));
  const std::vector<Tensor>& values = infer.output_values();
  if (values.empty() || values[0].empty()) {
    return internal_error("{}: inference gave no value for the output",
                          ctx.node().label());
  }
  // Inference's tensors may be views of attributes: outputs get their own.
  ctx.set_output(0, values[0].clone());
  return Status::ok();
}

}  // namespace

void register_known_values_kernels(KernelTable& table) {
  for (const char* op : {"Shape", "Size", "Constant"}) {
    table.add(CpuKernel{kOnnxDomain, op, run_from_inferred_value, nullptr});
  }
}

}  // namespace seqrt::cpu
