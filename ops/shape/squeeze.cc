// Squeeze: removes the dims at `axes` (optional input 1), which must have
// size 1; without axes, removes every dim of size 1.
#include "ops/registry.h"
#include "ops/shape/shape_util.h"
#include "ops/symbolic_value.h"

namespace seqrt {
namespace {

// Which input dims are removed, given the dims (fixed or not).
Result<std::vector<bool>> removed_dims(const OpContext& ctx, const Shape& in,
                                       const std::vector<int64_t>& axes) {
  SEQRT_ASSIGN_OR_RETURN(
      std::vector<int64_t> normalized,
      normalize_axes(ctx, axes, static_cast<int64_t>(in.rank())));
  std::vector<bool> removed(in.rank(), false);
  for (int64_t axis : normalized) {
    if (in[axis].is_fixed() && in[axis].value() != 1) {
      return ctx.error("cannot squeeze axis {} of shape {}: its size is not 1",
                       axis, in.to_string());
    }
    removed[axis] = true;
  }
  return removed;
}

Shape keep_dims(const Shape& in, const std::vector<bool>& removed) {
  std::vector<Dim> out;
  for (size_t d = 0; d < in.rank(); ++d) {
    if (!removed[d]) out.push_back(in[d]);
  }
  return Shape(std::move(out));
}

Status infer_squeeze_shape(InferContext& ctx) {
  DType dtype = ctx.input_dtype(0);
  const std::optional<Shape>& in = ctx.input_shape(0);
  SEQRT_ASSIGN_OR_RETURN(auto axes, known_int_list(ctx, 1, "axes"));
  if (!in) {
    ctx.set_output(0, dtype, std::nullopt);
    return Status::ok();
  }
  if (axes) {
    SEQRT_ASSIGN_OR_RETURN(std::vector<bool> removed,
                           removed_dims(ctx, *in, *axes));
    ctx.set_output(0, dtype, keep_dims(*in, removed));
  } else if (ctx.has_input(1)) {
    std::optional<int64_t> n = known_length(ctx, 1);
    if (n && *n > static_cast<int64_t>(in->rank())) {
      return ctx.error("{} axes to squeeze but the input has rank {}", *n,
                       in->rank());
    }
    ctx.set_output(0, dtype,
                   n ? std::optional<Shape>(unknown_shape(in->rank() - *n))
                     : std::nullopt);
  } else if (in->is_fixed()) {
    std::vector<bool> removed;
    for (const Dim& dim : in->dims()) removed.push_back(dim.value() == 1);
    ctx.set_output(0, dtype, keep_dims(*in, removed));
  } else {
    ctx.set_output(0, dtype, std::nullopt);  // a symbol may be 1 or not
  }
  return Status::ok();
}

Status infer_squeeze(InferContext& ctx) {
  SEQRT_RETURN_IF_ERROR(infer_squeeze_shape(ctx));
  forward_symbolic(ctx);  // [n] <-> n
  return Status::ok();
}

Status run_squeeze(KernelContext& ctx) {
  const Tensor& in = *ctx.input(0);
  std::vector<bool> removed;
  if (ctx.has_input(1)) {
    SEQRT_ASSIGN_OR_RETURN(auto axes,
                           read_int_list(ctx, *ctx.input(1), "axes"));
    SEQRT_ASSIGN_OR_RETURN(removed, removed_dims(ctx, in.shape(), axes));
  } else {
    for (int64_t dim : in.dims()) removed.push_back(dim == 1);
  }
  std::vector<int64_t> dims;
  for (size_t d = 0; d < in.rank(); ++d) {
    if (!removed[d]) dims.push_back(in.dim(d));
  }
  SEQRT_ASSIGN_OR_RETURN(Tensor out, in.clone().reshaped(std::move(dims)));
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

}  // namespace

void register_squeeze(OpRegistry& registry) {
  OpSchema s;
  s.name = "Squeeze";
  s.doc = "removes dims of size 1 (those at the given axes, or all)";
  s.inputs = {{"data"}, {"axes", true}};
  s.outputs = {{"squeezed"}};
  s.infer = infer_squeeze;
  s.reference = run_squeeze;
  register_or_die(registry, std::move(s));
}

}  // namespace seqrt
