// CPU kernels of ScatterND and ScatterElements: data is copied to the
// output with memcpy, then the updates are applied in order (so duplicate
// indices resolve as in the reference). Slices and plain replacement move
// bytes; reductions run typed for f32, i32 and i64, and through the
// reference arithmetic (double / int64) for the other dtypes. The offsets
// and every check come from ops/shape/scatter.h, shared with the reference.
#include <cstring>

#include "backends/cpu/kernel_table.h"
#include "ops/shape/scatter.h"
#include "ops/util.h"

namespace seqrt::cpu {
namespace {

void copy_bytes(const Tensor& from, Tensor& to) {
  const size_t bytes =
      static_cast<size_t>(from.num_elements()) * dtype_size(from.dtype());
  if (bytes != 0) std::memcpy(to.mutable_data(), from.data(), bytes);
}

template <typename T>
void reduce_typed(ScatterReduction reduction,
                  const std::vector<int64_t>& offsets, int64_t slice,
                  const Tensor& updates, Tensor& out) {
  const T* src = static_cast<const T*>(updates.data());
  T* dst = static_cast<T*>(out.mutable_data());
  for (size_t u = 0; u < offsets.size(); ++u) {
    T* row = dst + offsets[u];
    const T* update = src + static_cast<int64_t>(u) * slice;
    for (int64_t j = 0; j < slice; ++j) {
      row[j] = scatter_combine(reduction, row[j], update[j]);
    }
  }
}

// out = data with the plan's updates applied.
Status run_scatter(KernelContext& ctx, const ScatterPlan& plan) {
  const Tensor& data = *ctx.input(0);
  const Tensor& updates = *ctx.input(2);
  SEQRT_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocate_output(0, data.dtype(), data.dims()));
  copy_bytes(data, *out);
  const std::vector<int64_t>& offsets = plan.offsets;
  const int64_t slice = plan.slice;
  if (plan.reduction == ScatterReduction::kNone) {
    const size_t element = dtype_size(data.dtype());
    const auto* src = static_cast<const uint8_t*>(updates.data());
    auto* dst = static_cast<uint8_t*>(out->mutable_data());
    const size_t bytes = static_cast<size_t>(slice) * element;
    for (size_t u = 0; u < offsets.size(); ++u) {
      std::memcpy(dst + static_cast<size_t>(offsets[u]) * element,
                  src + u * bytes, bytes);
    }
    return Status::ok();
  }
  switch (data.dtype()) {
    case DType::kF32:
      reduce_typed<float>(plan.reduction, offsets, slice, updates, *out);
      return Status::ok();
    case DType::kI32:
      reduce_typed<int32_t>(plan.reduction, offsets, slice, updates, *out);
      return Status::ok();
    case DType::kI64:
      reduce_typed<int64_t>(plan.reduction, offsets, slice, updates, *out);
      return Status::ok();
    default:
      return scatter_reference(ctx, plan, updates, *out);
  }
}

Status run_scatter_nd(KernelContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(ScatterPlan plan, plan_scatter_nd(ctx));
  return run_scatter(ctx, plan);
}

Status run_scatter_elements(KernelContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(ScatterPlan plan, plan_scatter_elements(ctx));
  return run_scatter(ctx, plan);
}

}  // namespace

void register_scatter_kernels(KernelTable& table) {
  table.add(CpuKernel{kOnnxDomain, "ScatterND", run_scatter_nd, nullptr});
  table.add(
      CpuKernel{kOnnxDomain, "ScatterElements", run_scatter_elements, nullptr});
}

}  // namespace seqrt::cpu
