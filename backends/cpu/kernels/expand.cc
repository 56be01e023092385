// CPU kernel of Expand, generic over dtypes: the input read with zero
// strides on its broadcast axes, copied by strided_copy.h.
#include <vector>

#include "backends/cpu/kernel_table.h"
#include "backends/cpu/kernels/inferred_dims.h"
#include "backends/cpu/kernels/strided_copy.h"
#include "ops/util.h"

namespace seqrt::cpu {
namespace {

Status run_expand(KernelContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(std::vector<int64_t> dims, inferred_dims(ctx));
  return run_strided(ctx, dims, broadcast_strides(ctx.input(0)->dims(), dims));
}

}  // namespace

void register_expand_kernels(KernelTable& table) {
  table.add(CpuKernel{kOnnxDomain, "Expand", run_expand, nullptr});
}

}  // namespace seqrt::cpu
