// GatherND (opset 12+): slices of data picked by index tuples. indices'
// last dim k indexes data's dims [batch_dims, batch_dims + k); the first
// batch_dims dims of data and indices are matched pairwise (each batch
// entry indexes its own part of data). Output shape:
// indices.shape[:-1] + data.shape[batch_dims + k:]. Indices may be int64
// or int32 and negative (counting from the back); out of range is an error.
// The tuples and their checks are plan_nd_slices (nd_index.h), shared with
// ScatterND and with the backends' kernels.
#include "ops/shape/gather_nd.h"

#include <algorithm>

#include "ops/registry.h"
#include "ops/shape/shape_util.h"
#include "ops/util.h"

namespace seqrt {
namespace {

Status infer_gather_nd(InferContext& ctx) {
  const DType dtype = ctx.input_dtype(0);
  if (!is_integer(ctx.input_dtype(1))) {
    return ctx.error("indices must be integers, got {}",
                     dtype_name(ctx.input_dtype(1)));
  }
  const int64_t b = ctx.attr_int("batch_dims");
  const std::optional<Shape>& data = ctx.input_shape(0);
  const std::optional<Shape>& indices = ctx.input_shape(1);
  if (b < 0) return ctx.error("batch_dims {} must be >= 0", b);
  if (data && indices) {
    const int64_t r = static_cast<int64_t>(data->rank());
    const int64_t q = static_cast<int64_t>(indices->rank());
    if (r == 0 || q == 0) {
      return ctx.error("data and indices must have rank >= 1, got {} and {}", r,
                       q);
    }
    if (b >= std::min(r, q)) {
      return ctx.error(
          "batch_dims {} must be below the ranks of data ({}) "
          "and indices ({})",
          b, r, q);
    }
  }
  const bool k_known = indices && indices->rank() > 0 &&
                       (*indices)[indices->rank() - 1].is_fixed();
  if (!data || !indices || !k_known) {
    ctx.set_output(0, dtype, std::nullopt);
    return Status::ok();
  }
  const int64_t k = (*indices)[indices->rank() - 1].value();
  const int64_t r = static_cast<int64_t>(data->rank());
  if (k < 1 || k > r - b) {
    return ctx.error(
        "indices' last dim {} must be in [1, {}] (data's rank {} less "
        "batch_dims {})",
        k, r - b, r, b);
  }
  std::vector<Dim> out(indices->dims().begin(), indices->dims().end() - 1);
  out.insert(out.end(), data->dims().begin() + b + k, data->dims().end());
  ctx.set_output(0, dtype, Shape(std::move(out)));
  return Status::ok();
}

Status run_gather_nd(KernelContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(GatherNdPlan plan, plan_gather_nd(ctx));
  const Tensor& data = *ctx.input(0);
  SEQRT_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocate_output(0, data.dtype(), plan.out_dims));
  const NdSlices& slices = plan.slices;
  for (size_t t = 0; t < slices.offsets.size(); ++t) {
    copy_elements(data, slices.offsets[t], *out,
                  static_cast<int64_t>(t) * slices.slice, slices.slice);
  }
  return Status::ok();
}

}  // namespace

Result<GatherNdPlan> plan_gather_nd(const KernelContext& ctx) {
  const Tensor& data = *ctx.input(0);
  const Tensor& indices = *ctx.input(1);
  const int64_t b = ctx.attr_int("batch_dims");
  GatherNdPlan plan;
  SEQRT_ASSIGN_OR_RETURN(plan.slices, plan_nd_slices(ctx, data, indices, b));
  const int64_t k = indices.dim(indices.rank() - 1);
  plan.out_dims.assign(indices.dims().begin(), indices.dims().end() - 1);
  plan.out_dims.insert(plan.out_dims.end(), data.dims().begin() + b + k,
                       data.dims().end());
  return plan;
}

void register_gather_nd(OpRegistry& registry) {
  OpSchema s;
  s.name = "GatherND";
  s.doc = "slices of data picked by index tuples, with leading batch dims";
  s.inputs = {{"data"}, {"indices"}};
  s.outputs = {{"output"}};
  s.attrs = {{"batch_dims", AttrType::kInt, Attribute(0)}};
  s.infer = infer_gather_nd;
  s.reference = run_gather_nd;
  register_or_die(registry, std::move(s));
}

}  // namespace seqrt
