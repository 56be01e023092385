// CPU kernel of Split, generic over dtypes: each output is a strided copy
// (strided_copy.h) of its part of the input, dims from the op's inference.
#include <vector>

#include "backends/cpu/kernel_table.h"
#include "backends/cpu/kernels/inferred_dims.h"
#include "backends/cpu/kernels/strided_copy.h"
#include "ops/util.h"

namespace seqrt::cpu {
namespace {

// Each output is the slice of input 0 along `axis` after the earlier ones.
Status run_split(KernelContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(auto dims, inferred_output_dims(ctx));
  const Tensor& in = *ctx.input(0);
  SEQRT_ASSIGN_OR_RETURN(int64_t axis,
                         normalize_axis(ctx, ctx.attr_int("axis"),
                                        static_cast<int64_t>(in.rank())));
  std::vector<int64_t> strides = strides_of(in.dims());
  int64_t start = 0;
  for (size_t i = 0; i < dims.size(); ++i) {
    SEQRT_RETURN_IF_ERROR(
        run_strided(ctx, dims[i], strides, start * strides[axis], i));
    start += dims[i][axis];
  }
  return Status::ok();
}

}  // namespace

void register_split_kernels(KernelTable& table) {
  table.add(CpuKernel{kOnnxDomain, "Split", run_split, nullptr});
}

}  // namespace seqrt::cpu
