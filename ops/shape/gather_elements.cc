// GatherElements: out[i][j][k] = data[indices[i][j][k]][j][k] for axis 0
// (likewise for other axes). indices has data's rank; off the axis its
// dims may not exceed data's. Output shape = indices' shape.
#include "ops/registry.h"
#include "ops/shape/shape_util.h"
#include "ops/util.h"

namespace seqrt {
namespace {

Status infer_gather_elements(InferContext& ctx) {
  DType dtype = ctx.input_dtype(0);
  if (!is_integer(ctx.input_dtype(1))) {
    return ctx.error("indices must be integers, got {}",
                     dtype_name(ctx.input_dtype(1)));
  }
  const std::optional<Shape>& data = ctx.input_shape(0);
  const std::optional<Shape>& indices = ctx.input_shape(1);
  if (data && indices && data->rank() != indices->rank()) {
    return ctx.error("indices have rank {} but data has rank {}",
                     indices->rank(), data->rank());
  }
  if (data) {
    if (data->rank() == 0) return ctx.error("data must have rank >= 1");
    SEQRT_ASSIGN_OR_RETURN(int64_t axis,
                           normalize_axis(ctx, ctx.attr_int("axis"),
                                          static_cast<int64_t>(data->rank())));
    for (size_t d = 0; indices && d < data->rank(); ++d) {
      const Dim& want = (*data)[d];
      const Dim& got = (*indices)[d];
      if (static_cast<int64_t>(d) != axis && want.is_fixed() &&
          got.is_fixed() && got.value() > want.value()) {
        return ctx.error(
            "indices {} do not fit data {}: off axis {}, dims must be no "
            "larger",
            indices->to_string(), data->to_string(), axis);
      }
    }
  }
  ctx.set_output(0, dtype, indices);
  return Status::ok();
}

Status check_shapes(const KernelContext& ctx, const Tensor& data,
                    const Tensor& indices, int64_t axis) {
  if (!is_integer(indices.dtype())) {
    return ctx.error("indices must be integers, got {}",
                     dtype_name(indices.dtype()));
  }
  bool ok = data.rank() == indices.rank();
  for (size_t d = 0; ok && d < data.rank(); ++d) {
    ok = static_cast<int64_t>(d) == axis || indices.dim(d) <= data.dim(d);
  }
  if (!ok) {
    return ctx.error(
        "indices {} do not fit data {}: same rank and, off axis {}, dims no "
        "larger",
        dims_to_string(indices.dims()), dims_to_string(data.dims()), axis);
  }
  return Status::ok();
}

Status run_gather_elements(KernelContext& ctx) {
  const Tensor& data = *ctx.input(0);
  const Tensor& indices = *ctx.input(1);
  if (data.rank() == 0) return ctx.error("data must have rank >= 1");
  SEQRT_ASSIGN_OR_RETURN(int64_t axis,
                         normalize_axis(ctx, ctx.attr_int("axis"),
                                        static_cast<int64_t>(data.rank())));
  SEQRT_RETURN_IF_ERROR(check_shapes(ctx, data, indices, axis));
  SEQRT_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocate_output(0, data.dtype(), indices.dims()));
  std::vector<int64_t> strides = strides_of(data.dims());
  int64_t size = data.dim(axis);
  int64_t i = 0;
  for (CoordinateCounter c(indices.dims()); !c.done(); c.next(), ++i) {
    int64_t index = indices.element_i64(i);
    if (index < -size || index >= size) {
      return ctx.error(
          "index {} is out of range [{}, {}] for axis {} of size {}", index,
          -size, size - 1, axis, size);
    }
    if (index < 0) index += size;
    int64_t src = 0;
    for (size_t d = 0; d < data.rank(); ++d) {
      int64_t coord = static_cast<int64_t>(d) == axis ? index : c.coords()[d];
      src += coord * strides[d];
    }
    copy_elements(data, src, *out, i);
  }
  return Status::ok();
}

}  // namespace

void register_gather_elements(OpRegistry& registry) {
  OpSchema s;
  s.name = "GatherElements";
  s.doc = "data picked elementwise along one axis by indices";
  s.inputs = {{"data"}, {"indices"}};
  s.outputs = {{"output"}};
  s.attrs = {{"axis", AttrType::kInt, Attribute(0)}};
  s.infer = infer_gather_elements;
  s.reference = run_gather_elements;
  register_or_die(registry, std::move(s));
}

}  // namespace seqrt
