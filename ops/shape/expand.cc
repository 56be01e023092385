// Expand: the input broadcast (numpy rules, both ways) with the shape
// given by a 1-D integer input; a 1 in that shape keeps the input's dim.
#include <algorithm>

#include "ops/registry.h"
#include "ops/shape/shape_util.h"
#include "ops/symbolic_value.h"
#include "ops/util.h"

namespace seqrt {
namespace {

Status check_request(const OpContext& ctx, const std::vector<int64_t>& shape) {
  for (int64_t dim : shape) {
    if (dim < 0) {
      return ctx.error("shape {} has a negative dim", dims_to_string(shape));
    }
  }
  return Status::ok();
}

// Without the shape's values: a fixed input dim other than 1 survives any
// valid broadcast; every other dim is unknown.
Shape partial_shape(const Shape& in, size_t out_rank) {
  Shape out = unknown_shape(out_rank);
  size_t offset = out_rank - in.rank();
  for (size_t d = 0; d < in.rank(); ++d) {
    if (in[d].is_fixed() && in[d].value() != 1) out[offset + d] = in[d];
  }
  return out;
}

Status infer_expand(InferContext& ctx) {
  DType dtype = ctx.input_dtype(0);
  const std::optional<Shape>& in = ctx.input_shape(0);
  SEQRT_ASSIGN_OR_RETURN(auto shape, known_int_list(ctx, 1, "shape"));
  if (shape) SEQRT_RETURN_IF_ERROR(check_request(ctx, *shape));
  if (!in) {
    ctx.set_output(0, dtype, std::nullopt);
  } else if (shape) {
    SEQRT_ASSIGN_OR_RETURN(
        Shape out, broadcast_shapes(ctx, *in, Shape::from_dims(*shape)));
    ctx.set_output(0, dtype, out);
  } else if (std::optional<std::vector<Dim>> dims =
                 symbolic_shape_input(ctx, 1)) {
    SEQRT_ASSIGN_OR_RETURN(Shape out, broadcast_shapes(ctx, *in, *dims));
    ctx.set_output(0, dtype, out);
  } else if (std::optional<int64_t> n = known_length(ctx, 1)) {
    size_t rank = std::max<size_t>(in->rank(), static_cast<size_t>(*n));
    ctx.set_output(0, dtype, partial_shape(*in, rank));
  } else {
    ctx.set_output(0, dtype, std::nullopt);
  }
  return Status::ok();
}

Status run_expand(KernelContext& ctx) {
  const Tensor& in = *ctx.input(0);
  SEQRT_ASSIGN_OR_RETURN(auto shape,
                         read_int_list(ctx, *ctx.input(1), "shape"));
  SEQRT_RETURN_IF_ERROR(check_request(ctx, shape));
  SEQRT_ASSIGN_OR_RETURN(std::vector<int64_t> dims,
                         broadcast_dims(ctx, in.dims(), shape));
  SEQRT_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocate_output(0, in.dtype(), dims));
  BroadcastIndexer indexer(dims, {in.dims()});
  for (int64_t i = 0; i < out->num_elements(); ++i) {
    copy_elements(in, indexer.input_index(0, i), *out, i);
  }
  return Status::ok();
}

}  // namespace

void register_expand(OpRegistry& registry) {
  OpSchema s;
  s.name = "Expand";
  s.doc = "the input broadcast with a given shape";
  s.inputs = {{"input"}, {"shape"}};
  s.outputs = {{"output"}};
  s.infer = infer_expand;
  s.reference = run_expand;
  register_or_die(registry, std::move(s));
}

}  // namespace seqrt
