// CPU kernel of the ops that give the same elements new dims: Identity,
// Reshape, Flatten, Squeeze and Unsqueeze. The output shares the input's
// storage; its dims (and every shape error) come from the op's own
// inference on the concrete inputs, so they cannot drift from the reference.
#include "backends/cpu/kernel_table.h"
#include "backends/cpu/kernels/inferred_dims.h"

namespace seqrt::cpu {
namespace {

// Same elements, new dims: the output shares the input's storage.
Status run_reshape_like(KernelContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(std::vector<int64_t> dims, inferred_dims(ctx));
  SEQRT_ASSIGN_OR_RETURN(Tensor out, ctx.input(0)->reshaped(std::move(dims)));
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

}  // namespace

void register_reshape_kernels(KernelTable& table) {
  for (const char* op :
       {"Identity", "Reshape", "Flatten", "Squeeze", "Unsqueeze"}) {
    table.add(CpuKernel{kOnnxDomain, op, run_reshape_like, nullptr});
  }
}

}  // namespace seqrt::cpu
