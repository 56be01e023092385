// The CUDA kernel table's index-tuple ops, every dtype. The indices are
// checked and turned into offsets on the host by the op's own plan
// (plan_scatter_nd / plan_scatter_elements, ops/shape/scatter.h;
// plan_gather_nd, ops/shape/gather_nd.h). ScatterND and ScatterElements:
// the offsets are grouped by destination (scatter_plan.h) and uploaded; the
// device copies data to the output and applies the groups. GatherND: the
// slice offsets are uploaded and the device copies each slice out
// (kernels/scatter.cu).
#include <string>
#include <vector>

#include "backends/cuda/cuda_status.h"
#include "backends/cuda/kernel_support.h"
#include "backends/cuda/kernels/scatter.h"
#include "backends/cuda/node_io.h"
#include "backends/cuda/scatter_plan.h"
#include "ops/shape/gather_nd.h"
#include "ops/shape/scatter.h"

namespace seqrt::cuda {
namespace {

Status run_scatter(KernelContext& ctx, CudaContext& cuda,
                   const ScatterPlan& plan) {
  const Tensor& data = *ctx.input(kScatterData);
  SEQRT_RETURN_IF_ERROR(check_scatter_dtype(ctx, plan.reduction, data.dtype()));
  const ScatterGroups groups = group_scatter(plan);
  const size_t index_bytes = groups.packed.size() * sizeof(int64_t);
  NodeIo io(ctx, cuda);
  SEQRT_RETURN_IF_ERROR(io.begin(
      {data.dims()},
      static_cast<int64_t>((index_bytes + sizeof(float) - 1) / sizeof(float)),
      {data.dtype()}));
  const std::string what = ctx.node().label();
  cudaStream_t stream = cuda.stream();
  SEQRT_CUDA_RETURN_IF_ERROR(
      cudaMemcpyAsync(io.raw_output(0), io.raw_input(kScatterData),
                      data.byte_size(), cudaMemcpyDeviceToDevice, stream),
      what);
  // Pageable memory: the call returns once `packed` has been staged.
  SEQRT_CUDA_RETURN_IF_ERROR(
      cudaMemcpyAsync(io.scratch(), groups.packed.data(), index_bytes,
                      cudaMemcpyHostToDevice, stream),
      what);
  const int64_t* packed = reinterpret_cast<const int64_t*>(io.scratch());
  const ScatterGroupsView view{
      packed + groups.targets_at(), packed + groups.starts_at(),
      packed + groups.order_at(), groups.groups, plan.slice};
  return io.finish(
      launch_scatter(data.dtype(), scatter_combine_of(plan), view,
                     io.raw_input(kScatterUpdates), io.raw_output(0), stream),
      what.c_str());
}

Status run_scatter_nd(KernelContext& ctx, CudaContext& cuda) {
  SEQRT_ASSIGN_OR_RETURN(ScatterPlan plan, plan_scatter_nd(ctx));
  return run_scatter(ctx, cuda, plan);
}

Status run_scatter_elements(KernelContext& ctx, CudaContext& cuda) {
  SEQRT_ASSIGN_OR_RETURN(ScatterPlan plan, plan_scatter_elements(ctx));
  return run_scatter(ctx, cuda, plan);
}

Status run_gather_nd(KernelContext& ctx, CudaContext& cuda) {
  SEQRT_ASSIGN_OR_RETURN(GatherNdPlan plan, plan_gather_nd(ctx));
  const Tensor& data = *ctx.input(0);
  const std::vector<int64_t>& offsets = plan.slices.offsets;
  const size_t index_bytes = offsets.size() * sizeof(int64_t);
  NodeIo io(ctx, cuda);
  SEQRT_RETURN_IF_ERROR(io.begin(
      {plan.out_dims},
      static_cast<int64_t>((index_bytes + sizeof(float) - 1) / sizeof(float)),
      {data.dtype()}));
  const std::string what = ctx.node().label();
  cudaStream_t stream = cuda.stream();
  if (index_bytes != 0) {
    // Pageable memory: the call returns once `offsets` has been staged.
    SEQRT_CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(io.scratch(), offsets.data(), index_bytes,
                        cudaMemcpyHostToDevice, stream),
        what);
  }
  return io.finish(launch_gather_slices(
                       dtype_size(data.dtype()),
                       reinterpret_cast<const int64_t*>(io.scratch()),
                       static_cast<int64_t>(offsets.size()), plan.slices.slice,
                       io.raw_input(0), io.raw_output(0), stream),
                   what.c_str());
}

}  // namespace

void add_scatter_kernels(std::vector<CudaKernel>& kernels) {
  kernels.push_back({kOnnxDomain, "ScatterND", any_dtype, run_scatter_nd});
  kernels.push_back(
      {kOnnxDomain, "ScatterElements", any_dtype, run_scatter_elements});
  kernels.push_back({kOnnxDomain, "GatherND", any_dtype, run_gather_nd});
}

}  // namespace seqrt::cuda
