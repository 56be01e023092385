// Shape: the dims of the input as a 1-D i64 tensor, optionally only those
// in [start, end) (negative values count from the back, then clamped).
// Its value is known at inference time when those dims are fixed, so
// Shape -> Gather -> Concat -> Reshape chains infer; with symbolic dims
// its value is known symbolically (ops/symbolic_value.h).
#include <algorithm>

#include "ops/registry.h"

namespace seqrt {
namespace {

// The clamped [start, end) range of dims for an input of `rank`.
std::pair<int64_t, int64_t> dim_range(const OpContext& ctx, int64_t rank) {
  auto clamp = [rank](int64_t i) {
    return std::clamp<int64_t>(i < 0 ? i + rank : i, 0, rank);
  };
  int64_t start = clamp(ctx.attr_int("start"));
  int64_t end = ctx.has_attr("end") ? clamp(ctx.attr_int("end")) : rank;
  return {start, std::max(start, end)};
}

Status infer_shape(InferContext& ctx) {
  const std::optional<Shape>& shape = ctx.input_shape(0);
  if (!shape) {
    ctx.set_output(0, DType::kI64, Shape({Dim::unknown()}));
    return Status::ok();
  }
  auto [start, end] = dim_range(ctx, static_cast<int64_t>(shape->rank()));
  ctx.set_output(0, DType::kI64, Shape({end - start}));
  std::vector<int64_t> dims;
  std::vector<DimExpr> symbolic;
  for (int64_t d = start; d < end; ++d) {
    dims.push_back((*shape)[d].value());
    symbolic.push_back(DimExpr::from_dim((*shape)[d]));
  }
  if (std::any_of(dims.begin(), dims.end(), [](int64_t d) { return d < 0; })) {
    // Some dim is symbolic: its value is known only symbolically.
    if (end - start <= kMaxSymbolicElements) {
      ctx.set_output_symbolic(0, std::move(symbolic));
    }
    return Status::ok();
  }
  ctx.set_output_value(0, Tensor::from_vector<int64_t>({end - start}, dims));
  return Status::ok();
}

Status run_shape(KernelContext& ctx) {
  const std::vector<int64_t>& dims = ctx.input(0)->dims();
  auto [start, end] = dim_range(ctx, static_cast<int64_t>(dims.size()));
  std::vector<int64_t> out(dims.begin() + start, dims.begin() + end);
  ctx.set_output(0, Tensor::from_vector<int64_t>({end - start}, out));
  return Status::ok();
}

}  // namespace

void register_shape(OpRegistry& registry) {
  OpSchema s;
  s.name = "Shape";
  s.doc = "the input's dims [start, end) as a 1-D i64 tensor";
  s.inputs = {{"data"}};
  s.outputs = {{"shape"}};
  s.attrs = {{"start", AttrType::kInt, Attribute(0)}, {"end", AttrType::kInt}};
  s.infer = infer_shape;
  s.reference = run_shape;
  register_or_die(registry, std::move(s));
}

}  // namespace seqrt
