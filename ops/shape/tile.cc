// Tile: the input repeated repeats[d] times along each dim d, where
// `repeats` is a 1-D integer input with one non-negative entry per dim.
#include <optional>
#include <vector>

#include "ops/registry.h"
#include "ops/shape/shape_util.h"
#include "ops/symbolic_value.h"
#include "ops/util.h"

namespace seqrt {
namespace {

Status check_repeats(const OpContext& ctx, const std::vector<int64_t>& repeats,
                     size_t rank) {
  if (repeats.size() != rank) {
    return ctx.error("repeats {} must have one entry per input dim ({})",
                     dims_to_string(repeats), rank);
  }
  for (int64_t r : repeats) {
    if (r < 0) {
      return ctx.error("repeats {} has a negative entry",
                       dims_to_string(repeats));
    }
  }
  return Status::ok();
}

// A dim repeated `r` times: symbols survive only r = 1.
Dim tiled_dim(const Dim& dim, int64_t r) {
  if (r == 1) return dim;
  if (r == 0) return Dim(0);
  if (dim.is_fixed() && dim.value() <= kMaxElements / r) {
    return Dim(dim.value() * r);
  }
  return Dim::unknown();
}

Status infer_tile(InferContext& ctx) {
  DType dtype = ctx.input_dtype(0);
  const std::optional<Shape>& in = ctx.input_shape(0);
  SEQRT_ASSIGN_OR_RETURN(auto repeats, known_int_list(ctx, 1, "repeats"));
  if (!in) {
    std::optional<int64_t> rank = known_length(ctx, 1);
    ctx.set_output(
        0, dtype,
        rank ? std::optional<Shape>(unknown_shape(*rank)) : std::nullopt);
    return Status::ok();
  }
  std::optional<std::vector<Dim>> symbolic = symbolic_shape_input(ctx, 1);
  if (!repeats && symbolic && symbolic->size() == in->rank()) {
    Shape out = *in;
    for (size_t d = 0; d < in->rank(); ++d) {
      out[d] = dim_mul((*in)[d], (*symbolic)[d]);
    }
    ctx.set_output(0, dtype, std::move(out));
    return Status::ok();
  }
  if (!repeats) {
    ctx.set_output(0, dtype, unknown_shape(in->rank()));
    return Status::ok();
  }
  SEQRT_RETURN_IF_ERROR(check_repeats(ctx, *repeats, in->rank()));
  Shape out = *in;
  for (size_t d = 0; d < in->rank(); ++d) {
    out[d] = tiled_dim((*in)[d], (*repeats)[d]);
  }
  ctx.set_output(0, dtype, std::move(out));
  return Status::ok();
}

Status run_tile(KernelContext& ctx) {
  const Tensor& in = *ctx.input(0);
  SEQRT_ASSIGN_OR_RETURN(auto repeats,
                         read_int_list(ctx, *ctx.input(1), "repeats"));
  SEQRT_RETURN_IF_ERROR(check_repeats(ctx, repeats, in.rank()));
  std::vector<int64_t> dims = in.dims();
  for (size_t d = 0; d < dims.size(); ++d) {
    if (repeats[d] != 0 && dims[d] > kMaxElements / repeats[d]) {
      return ctx.error("tiling {} by {} passes 2^48 elements",
                       dims_to_string(in.dims()), dims_to_string(repeats));
    }
    dims[d] *= repeats[d];
  }
  if (!checked_num_elements(dims).is_ok()) {
    return ctx.error("tiling {} by {} passes 2^48 elements",
                     dims_to_string(in.dims()), dims_to_string(repeats));
  }
  SEQRT_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocate_output(0, in.dtype(), dims));
  std::vector<int64_t> in_strides = strides_of(in.dims());
  int64_t i = 0;
  for (CoordinateCounter c(dims); !c.done(); c.next(), ++i) {
    int64_t src = 0;
    for (size_t d = 0; d < dims.size(); ++d) {
      src += (c.coords()[d] % in.dim(d)) * in_strides[d];
    }
    copy_elements(in, src, *out, i);
  }
  return Status::ok();
}

}  // namespace

void register_tile(OpRegistry& registry) {
  OpSchema s;
  s.name = "Tile";
  s.doc = "the input repeated repeats[d] times along each dim d";
  s.inputs = {{"input"}, {"repeats"}};
  s.outputs = {{"output"}};
  s.infer = infer_tile;
  s.reference = run_tile;
  register_or_die(registry, std::move(s));
}

}  // namespace seqrt
