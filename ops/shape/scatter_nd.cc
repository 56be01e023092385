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
  SEQRT_RETURN_IF_ERROR(check_scatter_types(ctx));
  const DType dtype = ctx.input_dtype(0);
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
  SEQRT_ASSIGN_OR_RETURN(ScatterPlan plan, plan_scatter_nd(ctx));
  return run_scatter_reference(ctx, plan);
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
