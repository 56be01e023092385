// ScatterElements: out = data, then for each element position p of indices,
// out[p with p[axis] replaced by indices[p]] = updates[p], combined with the
// old value under `reduction` (opset 16: add, mul; 18: max, min). indices
// and updates share a shape of data's rank, no larger than data off the
// axis. Negative indices count from the back; with duplicate indices and no
// reduction the last update wins.
#include "ops/registry.h"
#include "ops/shape/scatter.h"
#include "ops/shape/shape_util.h"
#include "ops/util.h"

namespace seqrt {
namespace {

Status infer_scatter_elements(InferContext& ctx) {
  SEQRT_RETURN_IF_ERROR(check_scatter_types(ctx));
  const DType dtype = ctx.input_dtype(0);
  const std::optional<Shape>& data = ctx.input_shape(0);
  const std::optional<Shape>& indices = ctx.input_shape(1);
  if (data) {
    if (data->rank() == 0) return ctx.error("data must have rank >= 1");
    SEQRT_RETURN_IF_ERROR(normalize_axis(ctx, ctx.attr_int("axis"),
                                         static_cast<int64_t>(data->rank()))
                              .status());
    if (indices && indices->rank() != data->rank()) {
      return ctx.error("indices have rank {} but data has rank {}",
                       indices->rank(), data->rank());
    }
  }
  ctx.set_output(0, dtype, data);
  return Status::ok();
}

Status run_scatter_elements(KernelContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(ScatterPlan plan, plan_scatter_elements(ctx));
  return run_scatter_reference(ctx, plan);
}

}  // namespace

void register_scatter_elements(OpRegistry& registry) {
  OpSchema s;
  s.name = "ScatterElements";
  s.doc = "data with elements along one axis replaced or reduced by updates";
  s.inputs = {{"data"}, {"indices"}, {"updates"}};
  s.outputs = {{"output"}};
  s.attrs = {{"axis", AttrType::kInt, Attribute(0)},
             {"reduction", AttrType::kString, Attribute(std::string("none"))}};
  s.infer = infer_scatter_elements;
  s.reference = run_scatter_elements;
  register_or_die(registry, std::move(s));
}

}  // namespace seqrt
