// Flatten: the input as a 2-D matrix whose rows are the dims before `axis`
// and whose columns are the dims from `axis` on (axis in [-rank, rank]; an
// empty product is 1).
#include <optional>
#include <vector>

#include "ops/registry.h"
#include "ops/shape/shape_util.h"

namespace seqrt {
namespace {

// `axis` mapped into [0, rank]: unlike most axes, rank itself is allowed.
Result<int64_t> flatten_axis(const OpContext& ctx, int64_t rank) {
  int64_t axis = ctx.attr_int("axis");
  if (axis < -rank || axis > rank) {
    return ctx.error("axis {} is out of range [{}, {}] for an input of rank {}",
                     axis, -rank, rank, rank);
  }
  return axis < 0 ? axis + rank : axis;
}

// The product of dims [begin, end): fixed when they all are, a symbol when
// one symbol is multiplied only by 1s, otherwise unknown.
Dim dim_product(const Shape& shape, int64_t begin, int64_t end) {
  int64_t fixed = 1;
  std::optional<Dim> symbol;
  for (int64_t d = begin; d < end; ++d) {
    const Dim& dim = shape[d];
    if (dim.is_fixed()) {
      if (dim.value() != 0 && fixed > kMaxElements / dim.value()) {
        return Dim::unknown();
      }
      fixed *= dim.value();
    } else if (dim.is_symbol() && !symbol.has_value()) {
      symbol = dim;
    } else {
      return Dim::unknown();
    }
  }
  if (!symbol.has_value()) return Dim(fixed);
  if (fixed == 1) return *symbol;
  return fixed == 0 ? Dim(0) : Dim::unknown();
}

Status infer_flatten(InferContext& ctx) {
  const std::optional<Shape>& in = ctx.input_shape(0);
  if (!in.has_value()) {
    ctx.set_output(0, ctx.input_dtype(0), unknown_shape(2));
    return Status::ok();
  }
  int64_t rank = static_cast<int64_t>(in->rank());
  SEQRT_ASSIGN_OR_RETURN(int64_t axis, flatten_axis(ctx, rank));
  ctx.set_output(
      0, ctx.input_dtype(0),
      Shape({dim_product(*in, 0, axis), dim_product(*in, axis, rank)}));
  return Status::ok();
}

Status run_flatten(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  const std::vector<int64_t>& dims = x.dims();
  int64_t rank = static_cast<int64_t>(dims.size());
  SEQRT_ASSIGN_OR_RETURN(int64_t axis, flatten_axis(ctx, rank));
  int64_t rows = 1;
  for (int64_t d = 0; d < axis; ++d) rows *= dims[d];
  int64_t cols = 1;
  for (int64_t d = axis; d < rank; ++d) cols *= dims[d];
  SEQRT_ASSIGN_OR_RETURN(Tensor out, x.clone().reshaped({rows, cols}));
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

}  // namespace

void register_flatten(OpRegistry& registry) {
  OpSchema s;
  s.name = "Flatten";
  s.doc = "the input as a matrix: dims before `axis` by dims from `axis` on";
  s.inputs = {{"input"}};
  s.outputs = {{"output"}};
  s.attrs = {{"axis", AttrType::kInt, Attribute(1)}};
  s.infer = infer_flatten;
  s.reference = run_flatten;
  register_or_die(registry, std::move(s));
}

}  // namespace seqrt
