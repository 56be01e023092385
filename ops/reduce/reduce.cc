// ReduceSum, ReduceMean, ReduceMax, ReduceMin (opset 18; ReduceMax/Min 20
// with bool): reduce over the axes given by the optional int64 input
// `axes`. No axes (or an empty list) reduces every axis, or none with
// noop_with_empty_axes=1. The four differ only in the accumulation.
#include <cmath>
#include <string>

#include "ops/elementwise/elementwise.h"
#include "ops/reduce/reduce.h"
#include "ops/registry.h"
#include "ops/type_support.h"
#include "ops/util.h"

namespace seqrt {
namespace {

struct ReduceOp {
  const char* name;
  const char* doc;
  ReduceKind kind;
  DTypeSet dtypes;
};

const ReduceOp kReduceOps[] = {
    {"ReduceSum", "sum", ReduceKind::kSum, kNumericTypes},
    {"ReduceMean", "mean", ReduceKind::kMean, kNumericTypes},
    {"ReduceMax", "maximum", ReduceKind::kMax, kAllTypes},
    {"ReduceMin", "minimum", ReduceKind::kMin, kAllTypes},
};

Status check_axes_input(const OpContext& ctx, DType dtype,
                        const std::optional<Shape>& shape) {
  SEQRT_RETURN_IF_ERROR(
      check_input_dtype(ctx, "input 'axes'", dtype, DTypeSet{DType::kI64}));
  if (shape.has_value() && shape->rank() > 1) {
    return ctx.error("input 'axes' must be 1-D, got shape {}",
                     shape->to_string());
  }
  return Status::ok();
}

// For each of `rank` dims, whether it is reduced.
Result<std::vector<bool>> reduced_dims(const OpContext& ctx,
                                       const std::vector<int64_t>& axes,
                                       int64_t rank) {
  bool empty = axes.empty();
  if (empty && ctx.attr_int("noop_with_empty_axes") != 0) {
    return std::vector<bool>(rank, false);
  }
  std::vector<bool> reduced(rank, empty);
  for (int64_t axis : axes) {
    SEQRT_ASSIGN_OR_RETURN(int64_t d, normalize_axis(ctx, axis, rank));
    if (rank == 0) return ctx.error("a scalar has no axis {} to reduce", axis);
    if (reduced[d]) return ctx.error("axis {} is listed twice in axes", axis);
    reduced[d] = true;
  }
  return reduced;
}

template <typename DimT>
std::vector<DimT> reduced_shape(const std::vector<DimT>& dims,
                                const std::vector<bool>& reduced,
                                bool keepdims) {
  std::vector<DimT> out;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (!reduced[d])
      out.push_back(dims[d]);
    else if (keepdims)
      out.push_back(DimT(1));
  }
  return out;
}

// The output shape when the axes are not known until run time: with
// keepdims the rank stays, and only dims of size 1 are sure to stay 1.
std::optional<Shape> shape_for_unknown_axes(const std::optional<Shape>& data,
                                            bool keepdims) {
  if (!data.has_value() || !keepdims) return std::nullopt;
  Shape out = *data;
  for (Dim& dim : out.dims()) {
    if (dim != Dim(1)) dim = Dim::unknown();
  }
  return out;
}

Status infer_reduce(InferContext& ctx, DTypeSet dtypes) {
  SEQRT_RETURN_IF_ERROR(
      check_input_dtype(ctx, "input 'data'", ctx.input_dtype(0), dtypes));
  bool keepdims = ctx.attr_int("keepdims") != 0;
  const std::optional<Shape>& data = ctx.input_shape(0);
  std::vector<int64_t> axes;
  if (ctx.has_input(1)) {
    const std::optional<Shape>& axes_shape = ctx.input_shape(1);
    SEQRT_RETURN_IF_ERROR(
        check_axes_input(ctx, ctx.input_dtype(1), axes_shape));
    bool known_empty = axes_shape.has_value() && axes_shape->rank() == 1 &&
                       (*axes_shape)[0] == Dim(0);
    if (ctx.input_value(1) != nullptr) {
      axes = tensor_to_ints(*ctx.input_value(1));
    } else if (!known_empty) {
      ctx.set_output(0, ctx.input_dtype(0),
                     shape_for_unknown_axes(data, keepdims));
      return Status::ok();
    }
  }
  std::optional<Shape> out;
  if (data.has_value()) {
    SEQRT_ASSIGN_OR_RETURN(
        std::vector<bool> reduced,
        reduced_dims(ctx, axes, static_cast<int64_t>(data->rank())));
    out = Shape(reduced_shape(data->dims(), reduced, keepdims));
  } else if (axes.empty() && !keepdims &&
             ctx.attr_int("noop_with_empty_axes") == 0) {
    out = Shape();  // every axis reduced away, whatever the rank was
  }
  ctx.set_output(0, ctx.input_dtype(0), out);
  return Status::ok();
}

// Folds `x` into `acc`: floats in double with NaN propagating through max
// and min, integers exactly in int64 (sums wrap).
double accumulate(ReduceKind kind, double acc, double x) {
  switch (kind) {
    case ReduceKind::kSum:
    case ReduceKind::kMean:
      return acc + x;
    case ReduceKind::kMax:
      return x > acc || std::isnan(x) ? x : acc;
    case ReduceKind::kMin:
      return x < acc || std::isnan(x) ? x : acc;
  }
  return acc;
}

int64_t accumulate(ReduceKind kind, int64_t acc, int64_t x) {
  switch (kind) {
    case ReduceKind::kSum:
    case ReduceKind::kMean:
      return wrapping_add(acc, x);
    case ReduceKind::kMax:
      return x > acc ? x : acc;
    case ReduceKind::kMin:
      return x < acc ? x : acc;
  }
  return acc;
}

void load(const Tensor& x, int64_t i, double* value) {
  *value = x.element_f64(i);
}
void load(const Tensor& x, int64_t i, int64_t* value) {
  *value = x.element_i64(i);
}
void store(Tensor& out, int64_t i, double value) {
  out.set_element_f64(i, value);
}
void store(Tensor& out, int64_t i, int64_t value) {
  out.set_element_i64(i, value);
}

// For each input dim, the stride of its coordinate in the output (0 for
// reduced dims).
std::vector<int64_t> output_strides(const std::vector<int64_t>& dims,
                                    const std::vector<bool>& reduced) {
  std::vector<int64_t> out(dims.size(), 0);
  int64_t stride = 1;
  for (size_t d = dims.size(); d-- > 0;) {
    if (reduced[d]) continue;
    out[d] = stride;
    stride *= dims[d];
  }
  return out;
}

// Accumulates in T: double for float dtypes, int64 for the others.
template <typename T>
Status reduce_into(KernelContext& ctx, ReduceKind kind, const Tensor& x,
                   const std::vector<bool>& reduced, Tensor& out) {
  if (out.num_elements() == 0) return Status::ok();
  int64_t count = x.num_elements() / out.num_elements();
  if (count == 0) {  // a reduced axis has size 0
    SEQRT_ASSIGN_OR_RETURN(double empty,
                           reduce_empty_value(ctx, kind, x.dtype()));
    for (int64_t o = 0; o < out.num_elements(); ++o) {
      out.set_element_f64(o, empty);
    }
    return Status::ok();
  }
  std::vector<int64_t> strides = output_strides(x.dims(), reduced);
  std::vector<T> acc(static_cast<size_t>(out.num_elements()), T(0));
  std::vector<bool> seen(acc.size(), false);
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    int64_t rest = i, o = 0;
    for (size_t d = x.rank(); d-- > 0;) {
      o += (rest % x.dim(d)) * strides[d];
      rest /= x.dim(d);
    }
    T value;
    load(x, i, &value);
    acc[o] = seen[o] ? accumulate(kind, acc[o], value) : value;
    seen[o] = true;
  }
  for (int64_t o = 0; o < out.num_elements(); ++o) {
    // Integer means truncate toward zero.
    if (kind == ReduceKind::kMean) acc[o] = acc[o] / static_cast<T>(count);
    store(out, o, acc[o]);
  }
  return Status::ok();
}

Status run_reduce(KernelContext& ctx, const ReduceOp& op) {
  const Tensor& x = *ctx.input(0);
  SEQRT_RETURN_IF_ERROR(
      check_input_dtype(ctx, "input 'data'", x.dtype(), op.dtypes));
  std::vector<int64_t> axes;
  if (const Tensor* axes_tensor = ctx.input(1)) {
    SEQRT_RETURN_IF_ERROR(
        check_axes_input(ctx, axes_tensor->dtype(), axes_tensor->shape()));
    axes = tensor_to_ints(*axes_tensor);
  }
  SEQRT_ASSIGN_OR_RETURN(
      std::vector<bool> reduced,
      reduced_dims(ctx, axes, static_cast<int64_t>(x.rank())));
  bool keepdims = ctx.attr_int("keepdims") != 0;
  SEQRT_ASSIGN_OR_RETURN(
      Tensor * out,
      ctx.allocate_output(0, x.dtype(),
                          reduced_shape(x.dims(), reduced, keepdims)));
  if (is_float(x.dtype())) {
    return reduce_into<double>(ctx, op.kind, x, reduced, *out);
  }
  return reduce_into<int64_t>(ctx, op.kind, x, reduced, *out);
}

void register_reduce_op(OpRegistry& registry, const ReduceOp& op) {
  OpSchema s;
  s.name = op.name;
  s.doc = std::string(op.doc) + " over the axes given by input 'axes'";
  s.inputs = {{"data"}, {"axes", true}};
  s.outputs = {{"reduced"}};
  s.attrs = {
      AttrSpec{"keepdims", AttrType::kInt, Attribute(1), false, {}},
      AttrSpec{"noop_with_empty_axes", AttrType::kInt, Attribute(0), false, {}},
  };
  s.infer = [dtypes = op.dtypes](InferContext& ctx) {
    return infer_reduce(ctx, dtypes);
  };
  s.reference = [op](KernelContext& ctx) { return run_reduce(ctx, op); };
  register_or_die(registry, std::move(s));
}

}  // namespace

void register_reduce_ops(OpRegistry& registry) {
  for (const ReduceOp& op : kReduceOps) register_reduce_op(registry, op);
}

Result<double> reduce_empty_value(const OpContext& ctx, ReduceKind kind,
                                  DType dtype) {
  bool float_type = is_float(dtype);
  switch (kind) {
    case ReduceKind::kSum:
      return 0.0;
    case ReduceKind::kMean:
      if (float_type) return std::nan("");
      return ctx.error("the mean of no {} elements is undefined",
                       dtype_name(dtype));
    case ReduceKind::kMax:
      return float_type ? -INFINITY
                        : static_cast<double>(integer_lowest(dtype));
    case ReduceKind::kMin:
      return float_type ? INFINITY
                        : static_cast<double>(integer_highest(dtype));
  }
  return 0.0;
}

}  // namespace seqrt
