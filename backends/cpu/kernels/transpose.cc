// CPU kernel of Transpose, generic over dtypes: a strided copy of the input
// (strided_copy.h), or oneDNN's reorder for f32 where the measurement chose
// it (../onednn/selection.h).
#include <numeric>
#include <vector>

#include "backends/cpu/kernel_table.h"
#include "backends/cpu/kernels/inferred_dims.h"
#include "backends/cpu/kernels/strided_copy.h"
#include "backends/cpu/onednn/reorder.h"
#include "backends/cpu/onednn/selection.h"
#include "ops/shape/shape_util.h"
#include "ops/util.h"

namespace seqrt::cpu {
namespace {

Status run_transpose(KernelContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(std::vector<int64_t> dims, inferred_dims(ctx));
  const Tensor& in = *ctx.input(0);
  std::vector<int64_t> perm(in.rank());
  if (ctx.has_attr("perm")) {
    perm = ctx.attr_ints("perm");
  } else {
    std::iota(perm.rbegin(), perm.rend(), 0);
  }
  std::vector<int64_t> in_strides = strides_of(in.dims());
  std::vector<int64_t> strides;
  for (int64_t p : perm) strides.push_back(in_strides[p]);
  // With the last axis in place the own copy moves contiguous runs; moved,
  // it copies element by element, where oneDNN's reorder is far faster.
  const onednn::OpClass op_class =
      !perm.empty() && perm.back() == static_cast<int64_t>(in.rank()) - 1
          ? onednn::OpClass::kTransposeKeepingLastAxis
          : onednn::OpClass::kTranspose;
  if (in.dtype() == DType::kF32 &&
      onednn::use_onednn(op_class, in.num_elements())) {
    SEQRT_ASSIGN_OR_RETURN(Tensor * out,
                           ctx.allocate_output(0, in.dtype(), dims));
    SEQRT_ASSIGN_OR_RETURN(
        bool ran, onednn::strided_copy(ctx.node().label(), dims, strides,
                                       in.data_as<float>(),
                                       out->mutable_data_as<float>()));
    if (ran) return Status::ok();
  }
  return run_strided(ctx, dims, strides);
}

}  // namespace

void register_transpose_kernels(KernelTable& table) {
  table.add(CpuKernel{kOnnxDomain, "Transpose", run_transpose, nullptr});
}

}  // namespace seqrt::cpu
