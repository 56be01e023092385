#include "backends/cpu/kernels/typed_support.h"

#include "ops/util.h"

namespace seqrt::cpu {

Result<BroadcastRuns> plan_broadcast_runs(
    const OpContext& ctx, const std::vector<std::vector<int64_t>>& inputs) {
  BroadcastRuns plan;
  for (const std::vector<int64_t>& dims : inputs) {
    SEQRT_ASSIGN_OR_RETURN(plan.out_dims,
                           broadcast_dims(ctx, plan.out_dims, dims));
  }
  std::vector<std::vector<int64_t>> full;
  for (const std::vector<int64_t>& dims : inputs) {
    full.push_back(broadcast_strides(dims, plan.out_dims));
  }
  plan.strides.resize(inputs.size());
  for (size_t i = 0; i < plan.out_dims.size(); ++i) {
    int64_t d = plan.out_dims[i];
    plan.num_elements *= d;
    if (d == 1) continue;
    // Axis i joins the previous one when every input steps through the
    // pair as through one axis.
    bool merge = !plan.dims.empty();
    for (size_t k = 0; merge && k < inputs.size(); ++k) {
      merge = plan.strides[k].back() == full[k][i] * d;
    }
    if (merge) {
      plan.dims.back() *= d;
      for (size_t k = 0; k < inputs.size(); ++k) {
        plan.strides[k].back() = full[k][i];
      }
      continue;
    }
    plan.dims.push_back(d);
    for (size_t k = 0; k < inputs.size(); ++k) {
      plan.strides[k].push_back(full[k][i]);
    }
  }
  if (plan.dims.empty()) {
    plan.dims = {1};
    for (std::vector<int64_t>& s : plan.strides) s = {0};
  }
  return plan;
}

Status check_two_same(const KernelContext& ctx) {
  if (!ctx.has_input(0) || !ctx.has_input(1)) {
    return ctx.error("needs inputs 'A' and 'B'");
  }
  if (ctx.input(0)->dtype() != ctx.input(1)->dtype()) {
    return ctx.error("inputs 'A' and 'B' must have one dtype, got {} and {}",
                     dtype_name(ctx.input(0)->dtype()),
                     dtype_name(ctx.input(1)->dtype()));
  }
  return Status::ok();
}

}  // namespace seqrt::cpu
