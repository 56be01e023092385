// ScatterND: out = data, then for each index tuple t of indices (its last
// dim k <= rank(data)), out[t] (a slice of data.shape[k:]) = updates at t's
// position, combined with the old value under `reduction` (opset 16: add,
// mul; 18: max, min). updates.shape = indices.shape[:-1] + data.shape[k:].
// Indices may be negative (counting from the back, as onnxruntime allows);
// with duplicate indices and no reduction the last update wins.
#include "ops/registry.h"
#include "ops/shape/scatter.h"
#include "ops/shape/shape_util.h"
#include "ops/util.h"

namespace seqrt {
namespace {

Status infer_scatter_nd(InferContext& ctx) {
  SEQRT_RETURN_IF_ERROR(scatter_reduction(ctx).status());
  const DType dtype = ctx.input_dtype(0);
  if (!is_integer(ctx.input_dtype(1))) {
    return ctx.error("indices must be integers, got {}",
                     dtype_name(ctx.input_dtype(1)));
  }
  if (ctx.input_dtype(2) != dtype) {
    return ctx.error("updates are {} but data is {}",
                     dtype_name(ctx.input_dtype(2)), dtype_name(dtype));
  }
  const std::optional<Shape>& data = ctx.input_shape(0);
  const std::optional<Shape>& indices = ctx.input_shape(1);
  if (data && data->rank() == 0) return ctx.error("data must have rank >= 1");
  if (indices && indices->rank() == 0) {
    return ctx.error("indices must have rank >= 1");
  }
  if (data && indices && (*indices)[indices->rank() - 1].is_fixed()) {
    const int64_t k = (*indices)[indices->rank() - 1].value();
    if (k < 1 || k > static_cast<int64_t>(data->rank())) {
      return ctx.error("indices' last dim {} must be in [1, {}] (data's rank)",
                       k, data->rank());
    }
  }
  ctx.set_output(0, dtype, data);
  return Status::ok();
}

Status run_scatter_nd(KernelContext& ctx) {
  const Tensor& data = *ctx.input(0);
  const Tensor& indices = *ctx.input(1);
  const Tensor& updates = *ctx.input(2);
  SEQRT_ASSIGN_OR_RETURN(ScatterReduction reduction, scatter_reduction(ctx));
  SEQRT_ASSIGN_OR_RETURN(ScatterNdPlan plan,
                         plan_scatter_nd(ctx, data, indices, updates));
  SEQRT_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocate_output(0, data.dtype(), data.dims()));
  copy_elements(data, 0, *out, 0, data.num_elements());
  return scatter_reference(ctx, reduction, plan.offsets, plan.slice, updates,
                           *out);
}

}  // namespace

void register_scatter_nd(OpRegistry& registry) {
  OpSchema s;
  s.name = "ScatterND";
  s.doc = "data with slices at index tuples replaced or reduced by updates";
  s.inputs = {{"data"}, {"indices"}, {"updates"}};
  s.outputs = {{"output"}};
  s.attrs = {{"reduction", AttrType::kString, Attribute(std::string("none"))}};
  s.infer = infer_scatter_nd;
  s.reference = run_scatter_nd;
  register_or_die(registry, std::move(s));
}

}  // namespace seqrt
