// Gather: entries of `data` along `axis` picked by integer `indices`
// (negative ones count from the back). Output shape:
// data.shape[:axis] + indices.shape + data.shape[axis+1:].
#include "ops/registry.h"
#include "ops/shape/shape_util.h"
#include "ops/util.h"

namespace seqrt {
namespace {

Status check_index(const OpContext& ctx, int64_t index, int64_t size,
                   int64_t axis) {
  if (index < -size || index >= size) {
    return ctx.error("index {} is out of range [{}, {}] for axis {} of size {}",
                     index, -size, size - 1, axis, size);
  }
  return Status::ok();
}

// Gather with known indices from a 1-D tensor known symbolically
// (Gather(Shape(x), 1) is x's dim 1).
void gather_symbolic(InferContext& ctx) {
  std::optional<std::vector<DimExpr>> data = ctx.input_symbolic(0);
  const Tensor* indices = ctx.input_value(1);
  if (!data || !indices || indices->rank() > 1 || !ctx.input_shape(0) ||
      ctx.input_shape(0)->rank() != 1) {
    return;
  }
  int64_t size = static_cast<int64_t>(data->size());
  std::vector<DimExpr> out;
  for (int64_t j = 0; j < indices->num_elements(); ++j) {
    int64_t index = indices->element_i64(j);
    if (index < 0) index += size;
    if (index < 0 || index >= size) return;
    out.push_back((*data)[index]);
  }
  ctx.set_output_symbolic(0, std::move(out));
}

Status infer_gather(InferContext& ctx) {
  DType dtype = ctx.input_dtype(0);
  if (!is_integer(ctx.input_dtype(1))) {
    return ctx.error("indices must be integers, got {}",
                     dtype_name(ctx.input_dtype(1)));
  }
  const std::optional<Shape>& data = ctx.input_shape(0);
  const std::optional<Shape>& indices = ctx.input_shape(1);
  if (!data || !indices) {
    ctx.set_output(0, dtype, std::nullopt);
    return Status::ok();
  }
  if (data->rank() == 0) return ctx.error("data must have rank >= 1");
  SEQRT_ASSIGN_OR_RETURN(int64_t axis,
                         normalize_axis(ctx, ctx.attr_int("axis"),
                                        static_cast<int64_t>(data->rank())));
  const Tensor* known = ctx.input_value(1);
  if (known && (*data)[axis].is_fixed()) {
    for (int64_t j = 0; j < known->num_elements(); ++j) {
      SEQRT_RETURN_IF_ERROR(
          check_index(ctx, known->element_i64(j), (*data)[axis].value(), axis));
    }
  }
  std::vector<Dim> out(data->dims().begin(), data->dims().begin() + axis);
  out.insert(out.end(), indices->dims().begin(), indices->dims().end());
  out.insert(out.end(), data->dims().begin() + axis + 1, data->dims().end());
  ctx.set_output(0, dtype, Shape(std::move(out)));
  gather_symbolic(ctx);
  return Status::ok();
}

Status run_gather(KernelContext& ctx) {
  const Tensor& data = *ctx.input(0);
  const Tensor& indices = *ctx.input(1);
  if (!is_integer(indices.dtype())) {
    return ctx.error("indices must be integers, got {}",
                     dtype_name(indices.dtype()));
  }
  if (data.rank() == 0) return ctx.error("data must have rank >= 1");
  SEQRT_ASSIGN_OR_RETURN(int64_t axis,
                         normalize_axis(ctx, ctx.attr_int("axis"),
                                        static_cast<int64_t>(data.rank())));
  std::vector<int64_t> dims(data.dims().begin(), data.dims().begin() + axis);
  dims.insert(dims.end(), indices.dims().begin(), indices.dims().end());
  dims.insert(dims.end(), data.dims().begin() + axis + 1, data.dims().end());
  SEQRT_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocate_output(0, data.dtype(), dims));
  int64_t size = data.dim(axis);
  int64_t inner = 1;
  for (size_t d = axis + 1; d < data.rank(); ++d) inner *= data.dim(d);
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= data.dim(d);
  int64_t count = indices.num_elements();
  for (int64_t j = 0; j < count; ++j) {
    int64_t index = indices.element_i64(j);
    SEQRT_RETURN_IF_ERROR(check_index(ctx, index, size, axis));
    if (index < 0) index += size;
    for (int64_t o = 0; o < outer; ++o) {
      copy_elements(data, (o * size + index) * inner, *out,
                    (o * count + j) * inner, inner);
    }
  }
  return Status::ok();
}

}  // namespace

void register_gather(OpRegistry& registry) {
  OpSchema s;
  s.name = "Gather";
  s.doc = "entries of data along one axis picked by indices";
  s.inputs = {{"data"}, {"indices"}};
  s.outputs = {{"output"}};
  s.attrs = {{"axis", AttrType::kInt, Attribute(0)}};
  s.infer = infer_gather;
  s.reference = run_gather;
  register_or_die(registry, std::move(s));
}

}  // namespace seqrt
