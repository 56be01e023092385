#include "ops/shape/scatter.h"

#include <string>
#include <utility>

#include "ops/shape/nd_index.h"
#include "ops/shape/shape_util.h"
#include "ops/util.h"

namespace seqrt {

Result<ScatterReduction> scatter_reduction(const OpContext& ctx) {
  const std::string name = ctx.attr_string("reduction");
  if (name == "none") return ScatterReduction::kNone;
  if (name == "add") return ScatterReduction::kAdd;
  if (name == "mul") return ScatterReduction::kMul;
  if (name == "max") return ScatterReduction::kMax;
  if (name == "min") return ScatterReduction::kMin;
  return ctx.error("reduction '{}' is not one of none, add, mul, max, min",
                   name);
}

Status check_scatter_types(const InferContext& ctx) {
  SEQRT_RETURN_IF_ERROR(scatter_reduction(ctx).status());
  if (!is_integer(ctx.input_dtype(1))) {
    return ctx.error("indices must be integers, got {}",
                     dtype_name(ctx.input_dtype(1)));
  }
  if (ctx.input_dtype(2) != ctx.input_dtype(0)) {
    return ctx.error("updates are {} but data is {}",
                     dtype_name(ctx.input_dtype(2)),
                     dtype_name(ctx.input_dtype(0)));
  }
  return Status::ok();
}

Result<ScatterPlan> plan_scatter_nd(const KernelContext& ctx) {
  const Tensor& data = *ctx.input(kScatterData);
  const Tensor& indices = *ctx.input(kScatterIndices);
  const Tensor& updates = *ctx.input(kScatterUpdates);
  ScatterPlan plan;
  SEQRT_ASSIGN_OR_RETURN(plan.reduction, scatter_reduction(ctx));
  SEQRT_ASSIGN_OR_RETURN(NdSlices slices,
                         plan_nd_slices(ctx, data, indices, /*batch_dims=*/0));
  // updates.shape = indices.shape[:-1] + data.shape[k:]
  const int64_t k = indices.dim(indices.rank() - 1);
  std::vector<int64_t> want(indices.dims().begin(), indices.dims().end() - 1);
  want.insert(want.end(), data.dims().begin() + k, data.dims().end());
  if (updates.dims() != want) {
    return ctx.error("updates {} must have shape {} (indices {}, data {})",
                     dims_to_string(updates.dims()), dims_to_string(want),
                     dims_to_string(indices.dims()),
                     dims_to_string(data.dims()));
  }
  if (updates.dtype() != data.dtype()) {
    return ctx.error("updates are {} but data is {}",
                     dtype_name(updates.dtype()), dtype_name(data.dtype()));
  }
  plan.offsets = std::move(slices.offsets);
  plan.slice = slices.slice;
  return plan;
}

Result<ScatterPlan> plan_scatter_elements(const KernelContext& ctx) {
  const Tensor& data = *ctx.input(kScatterData);
  const Tensor& indices = *ctx.input(kScatterIndices);
  const Tensor& updates = *ctx.input(kScatterUpdates);
  if (data.rank() == 0) return ctx.error("data must have rank >= 1");
  ScatterPlan plan;
  SEQRT_ASSIGN_OR_RETURN(plan.reduction, scatter_reduction(ctx));
  SEQRT_ASSIGN_OR_RETURN(int64_t axis,
                         normalize_axis(ctx, ctx.attr_int("axis"),
                                        static_cast<int64_t>(data.rank())));
  SEQRT_RETURN_IF_ERROR(check_integer_indices(ctx, indices));
  bool fits = data.rank() == indices.rank() && updates.dims() == indices.dims();
  for (size_t d = 0; fits && d < data.rank(); ++d) {
    fits = static_cast<int64_t>(d) == axis || indices.dim(d) <= data.dim(d);
  }
  if (!fits) {
    return ctx.error(
        "indices {} and updates {} do not fit data {}: all of one rank, "
        "updates shaped as indices and, off axis {}, no larger than data",
        dims_to_string(indices.dims()), dims_to_string(updates.dims()),
        dims_to_string(data.dims()), axis);
  }
  if (updates.dtype() != data.dtype()) {
    return ctx.error("updates are {} but data is {}",
                     dtype_name(updates.dtype()), dtype_name(data.dtype()));
  }
  const std::vector<int64_t> strides = strides_of(data.dims());
  std::vector<int64_t>& offsets = plan.offsets;
  offsets.resize(static_cast<size_t>(indices.num_elements()));
  int64_t i = 0;
  for (CoordinateCounter c(indices.dims()); !c.done(); c.next(), ++i) {
    int64_t offset = 0;
    for (size_t d = 0; d < data.rank(); ++d) {
      int64_t coord = c.coords()[d];
      if (static_cast<int64_t>(d) == axis) {
        SEQRT_ASSIGN_OR_RETURN(
            coord, checked_index(ctx, indices.element_i64(i), data.dim(d), d));
      }
      offset += coord * strides[d];
    }
    offsets[static_cast<size_t>(i)] = offset;
  }
  return plan;
}

Status check_scatter_dtype(const OpContext& ctx, ScatterReduction reduction,
                           DType dtype) {
  if (reduction != ScatterReduction::kNone && dtype == DType::kBool) {
    return ctx.error("reduction needs numbers, not bool");
  }
  return Status::ok();
}

Status scatter_reference(const OpContext& ctx, const ScatterPlan& plan,
                         const Tensor& updates, Tensor& out) {
  const ScatterReduction reduction = plan.reduction;
  const std::vector<int64_t>& offsets = plan.offsets;
  const int64_t slice = plan.slice;
  const DType dtype = out.dtype();
  SEQRT_RETURN_IF_ERROR(check_scatter_dtype(ctx, reduction, dtype));
  for (size_t u = 0; u < offsets.size(); ++u) {
    const int64_t src = static_cast<int64_t>(u) * slice;
    if (reduction == ScatterReduction::kNone) {
      copy_elements(updates, src, out, offsets[u], slice);
      continue;
    }
    for (int64_t j = 0; j < slice; ++j) {
      const int64_t dst = offsets[u] + j;
      if (is_float(dtype)) {
        out.set_element_f64(dst,
                            scatter_combine(reduction, out.element_f64(dst),
                                            updates.element_f64(src + j)));
      } else {
        out.set_element_i64(dst,
                            scatter_combine(reduction, out.element_i64(dst),
                                            updates.element_i64(src + j)));
      }
    }
  }
  return Status::ok();
}

Status run_scatter_reference(KernelContext& ctx, const ScatterPlan& plan) {
  const Tensor& data = *ctx.input(kScatterData);
  SEQRT_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocate_output(0, data.dtype(), data.dims()));
  copy_elements(data, 0, *out, 0, data.num_elements());
  return scatter_reference(ctx, plan, *ctx.input(kScatterUpdates), *out);
}

}  // namespace seqrt
