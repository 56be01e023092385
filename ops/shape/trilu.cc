// Trilu: keeps the upper (upper=1: j - i >= k) or lower (j - i <= k)
// triangle of the last two dims and zeroes the rest; k (input 1) defaults
// to 0.
#include "ops/registry.h"
#include "ops/shape/shape_util.h"

namespace seqrt {
namespace {

Status infer_trilu(InferContext& ctx) {
  const std::optional<Shape>& in = ctx.input_shape(0);
  if (in && in->rank() < 2) {
    return ctx.error("input must have rank >= 2, got shape {}",
                     in->to_string());
  }
  if (ctx.has_input(1) && !is_integer(ctx.input_dtype(1))) {
    return ctx.error("k must be an integer, got {}",
                     dtype_name(ctx.input_dtype(1)));
  }
  ctx.set_output(0, ctx.input_dtype(0), in);
  return Status::ok();
}

Status run_trilu(KernelContext& ctx) {
  const Tensor& in = *ctx.input(0);
  if (in.rank() < 2) {
    return ctx.error("input must have rank >= 2, got shape {}",
                     dims_to_string(in.dims()));
  }
  int64_t k = 0;
  if (ctx.has_input(1)) {
    SEQRT_ASSIGN_OR_RETURN(k, read_int_scalar(ctx, *ctx.input(1), "k"));
  }
  bool upper = ctx.attr_int("upper") != 0;
  SEQRT_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocate_output(0, in.dtype(), in.dims()));
  int64_t rows = in.dim(in.rank() - 2);
  int64_t cols = in.dim(in.rank() - 1);
  // The output starts zero-filled; copy only the kept triangle.
  for (int64_t i = 0; i < in.num_elements(); ++i) {
    int64_t col = i % cols;
    int64_t row = (i / cols) % rows;
    int64_t diagonal = col - row;
    if (upper ? diagonal >= k : diagonal <= k) copy_elements(in, i, *out, i);
  }
  return Status::ok();
}

}  // namespace

void register_trilu(OpRegistry& registry) {
  OpSchema s;
  s.name = "Trilu";
  s.doc = "the upper or lower triangle of the last two dims";
  s.inputs = {{"input"}, {"k", true}};
  s.outputs = {{"output"}};
  s.attrs = {{"upper", AttrType::kInt, Attribute(1)}};
  s.infer = infer_trilu;
  s.reference = run_trilu;
  register_or_die(registry, std::move(s));
}

}  // namespace seqrt
