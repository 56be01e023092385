// Slice: along each of `axes` (default 0, 1, ...), elements start,
// start + step, ... before end. Negative starts/ends count from the back;
// then, for step > 0, start and end are clamped to [0, dim]; for step < 0,
// start to [0, dim - 1] and end to [-1, dim - 1]. A zero step is an error.
#include <algorithm>

#include "ops/registry.h"
#include "ops/shape/shape_util.h"
#include "ops/util.h"

namespace seqrt {
namespace {

// Which elements of one axis are kept.
struct AxisSlice {
  int64_t start = 0;
  int64_t step = 1;
  int64_t count = 0;
};

AxisSlice slice_axis(int64_t dim, int64_t start, int64_t end, int64_t step) {
  // Past |2^62| a step keeps at most the first element either way, so
  // clamping it avoids overflow (of -INT64_MIN) without changing the result.
  constexpr int64_t kMaxStep = int64_t{1} << 62;
  step = std::clamp(step, -kMaxStep, kMaxStep);
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  AxisSlice s;
  s.step = step;
  if (step > 0) {
    s.start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    s.count = std::max<int64_t>(0, (end - s.start + step - 1) / step);
  } else {
    s.start = std::clamp<int64_t>(start, 0, std::max<int64_t>(dim - 1, 0));
    end = std::clamp<int64_t>(end, -1, dim - 1);
    s.count = std::max<int64_t>(0, (s.start - end - step - 1) / -step);
    if (dim == 0) s.count = 0;
  }
  return s;
}

// The inputs after validation: one (start, end, step) per sliced axis.
struct SliceArgs {
  std::vector<int64_t> starts, ends, axes, steps;
};

Result<SliceArgs> slice_args(const OpContext& ctx, std::vector<int64_t> starts,
                             std::vector<int64_t> ends,
                             std::optional<std::vector<int64_t>> axes,
                             std::optional<std::vector<int64_t>> steps,
                             int64_t rank) {
  SliceArgs args;
  size_t n = starts.size();
  if (ends.size() != n || (axes && axes->size() != n) ||
      (steps && steps->size() != n)) {
    return ctx.error(
        "starts, ends, axes and steps must have one entry per sliced axis; got "
        "{}, {}, {}, {}",
        n, ends.size(), axes ? axes->size() : n, steps ? steps->size() : n);
  }
  std::vector<int64_t> all(n);
  for (size_t i = 0; i < n; ++i) all[i] = static_cast<int64_t>(i);
  SEQRT_ASSIGN_OR_RETURN(args.axes,
                         normalize_axes(ctx, axes ? *axes : all, rank));
  args.steps = steps ? *steps : std::vector<int64_t>(n, 1);
  for (int64_t step : args.steps) {
    if (step == 0) return ctx.error("steps must not be 0");
  }
  args.starts = std::move(starts);
  args.ends = std::move(ends);
  return args;
}

// A start or end of a step-1 slice of an axis of size `dim`, at least one
// of them symbolic: negative constants count from the back, constants are
// clamped to a fixed dim and a huge end means the whole axis; a symbolic
// index is taken to lie within [0, dim], as exports compute it from the
// dims themselves (the same assumption onnxruntime's symbolic shape
// inference makes). Inference after binding the dims (bind_dims) sees
// constants and clamps exactly.
DimExpr symbolic_index(const DimExpr& index, const DimExpr& dim) {
  std::optional<int64_t> value = index.constant();
  if (!value) return index;
  std::optional<int64_t> fixed = dim.constant();
  int64_t at = *value;
  if (at >= kMaxElements) return dim;
  if (at < 0) {
    if (!fixed) return dim + DimExpr(at);
    at += *fixed;
  }
  return fixed ? DimExpr(std::clamp<int64_t>(at, 0, *fixed)) : DimExpr(at);
}

// The size of a step-1 slice [start, end) of `dim`, or unknown.
Dim symbolic_count(const Dim& dim, const DimExpr& start, const DimExpr& end) {
  DimExpr size = DimExpr::from_dim(dim);
  if (size.is_unknown()) return Dim::unknown();
  DimExpr count = symbolic_index(end, size) - symbolic_index(start, size);
  std::optional<int64_t> value = count.constant();
  if (value && *value < 0) return Dim(0);
  return count.to_dim();
}

// Slice of a data tensor whose starts or ends are known only
// symbolically, with known axes and steps: step-1 axes get symbolic
// sizes, others become unknown. False when the axes are not known.
Result<bool> infer_symbolic_bounds(InferContext& ctx, Shape& out) {
  std::optional<std::vector<DimExpr>> starts = ctx.input_symbolic(1);
  std::optional<std::vector<DimExpr>> ends = ctx.input_symbolic(2);
  SEQRT_ASSIGN_OR_RETURN(auto axes, known_int_list(ctx, 3, "axes"));
  SEQRT_ASSIGN_OR_RETURN(auto steps, known_int_list(ctx, 4, "steps"));
  if (!starts || !ends || (ctx.has_input(3) && !axes) ||
      (ctx.has_input(4) && !steps)) {
    return false;
  }
  size_t n = starts->size();
  std::vector<int64_t> no_bounds(n, 0);
  SEQRT_ASSIGN_OR_RETURN(
      SliceArgs args,
      slice_args(ctx, no_bounds, std::vector<int64_t>(ends->size()), axes,
                 steps, static_cast<int64_t>(out.rank())));
  for (size_t i = 0; i < n; ++i) {
    Dim& dim = out[args.axes[i]];
    dim = args.steps[i] == 1 ? symbolic_count(dim, (*starts)[i], (*ends)[i])
                             : Dim::unknown();
  }
  return true;
}

// Slice with known bounds of a 1-D tensor known symbolically.
void slice_symbolic_value(InferContext& ctx, const SliceArgs& args) {
  std::optional<std::vector<DimExpr>> data = ctx.input_symbolic(0);
  if (!data || args.axes.size() != 1) return;
  int64_t size = static_cast<int64_t>(data->size());
  AxisSlice s = slice_axis(size, args.starts[0], args.ends[0], args.steps[0]);
  std::vector<DimExpr> out;
  for (int64_t k = 0; k < s.count; ++k) {
    out.push_back((*data)[s.start + k * s.step]);
  }
  ctx.set_output_symbolic(0, std::move(out));
}

Status infer_slice(InferContext& ctx) {
  DType dtype = ctx.input_dtype(0);
  const std::optional<Shape>& in = ctx.input_shape(0);
  SEQRT_ASSIGN_OR_RETURN(auto starts, known_int_list(ctx, 1, "starts"));
  SEQRT_ASSIGN_OR_RETURN(auto ends, known_int_list(ctx, 2, "ends"));
  SEQRT_ASSIGN_OR_RETURN(auto axes, known_int_list(ctx, 3, "axes"));
  SEQRT_ASSIGN_OR_RETURN(auto steps, known_int_list(ctx, 4, "steps"));
  if (!in) {
    ctx.set_output(0, dtype, std::nullopt);
    return Status::ok();
  }
  int64_t rank = static_cast<int64_t>(in->rank());
  Shape out = *in;
  bool all_known = starts && ends && (axes || !ctx.has_input(3)) &&
                   (steps || !ctx.has_input(4));
  if (!all_known) {
    SEQRT_ASSIGN_OR_RETURN(bool symbolic, infer_symbolic_bounds(ctx, out));
    if (symbolic) {
      ctx.set_output(0, dtype, out);
      return Status::ok();
    }
    // Only the sliced axes change; which those are may still be known.
    std::optional<std::vector<int64_t>> touched = axes;
    std::optional<int64_t> n = known_length(ctx, 1);
    if (!ctx.has_input(3) && n) {
      touched = std::vector<int64_t>();
      for (int64_t i = 0; i < *n; ++i) touched->push_back(i);
    }
    if (!touched) {
      ctx.set_output(0, dtype, unknown_shape(in->rank()));
      return Status::ok();
    }
    SEQRT_ASSIGN_OR_RETURN(auto normalized,
                           normalize_axes(ctx, *touched, rank));
    for (int64_t axis : normalized) out[axis] = Dim::unknown();
    ctx.set_output(0, dtype, out);
    return Status::ok();
  }
  SEQRT_ASSIGN_OR_RETURN(SliceArgs args,
                         slice_args(ctx, *starts, *ends, axes, steps, rank));
  for (size_t i = 0; i < args.axes.size(); ++i) {
    Dim& dim = out[args.axes[i]];
    SEQRT_RETURN_IF_ERROR(check_dim_size(ctx, dim));
    if (dim.is_fixed()) {
      dim = slice_axis(dim.value(), args.starts[i], args.ends[i], args.steps[i])
                .count;
    } else if (args.steps[i] == 1) {
      dim = symbolic_count(dim, args.starts[i], args.ends[i]);
    } else {
      dim = Dim::unknown();
    }
  }
  ctx.set_output(0, dtype, out);
  if (in->rank() == 1) slice_symbolic_value(ctx, args);
  return Status::ok();
}

Result<SliceArgs> read_args(const KernelContext& ctx, int64_t rank) {
  SEQRT_ASSIGN_OR_RETURN(auto starts,
                         read_int_list(ctx, *ctx.input(1), "starts"));
  SEQRT_ASSIGN_OR_RETURN(auto ends, read_int_list(ctx, *ctx.input(2), "ends"));
  std::optional<std::vector<int64_t>> axes, steps;
  if (ctx.has_input(3)) {
    SEQRT_ASSIGN_OR_RETURN(axes, read_int_list(ctx, *ctx.input(3), "axes"));
  }
  if (ctx.has_input(4)) {
    SEQRT_ASSIGN_OR_RETURN(steps, read_int_list(ctx, *ctx.input(4), "steps"));
  }
  return slice_args(ctx, std::move(starts), std::move(ends), std::move(axes),
                    std::move(steps), rank);
}

Status run_slice(KernelContext& ctx) {
  const Tensor& in = *ctx.input(0);
  SEQRT_ASSIGN_OR_RETURN(SliceArgs args,
                         read_args(ctx, static_cast<int64_t>(in.rank())));
  std::vector<AxisSlice> slices(in.rank());
  for (size_t d = 0; d < in.rank(); ++d) slices[d].count = in.dim(d);
  for (size_t i = 0; i < args.axes.size(); ++i) {
    int64_t axis = args.axes[i];
    slices[axis] =
        slice_axis(in.dim(axis), args.starts[i], args.ends[i], args.steps[i]);
  }
  std::vector<int64_t> dims;
  for (const AxisSlice& s : slices) dims.push_back(s.count);
  SEQRT_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocate_output(0, in.dtype(), dims));
  std::vector<int64_t> strides = strides_of(in.dims());
  int64_t i = 0;
  for (CoordinateCounter c(dims); !c.done(); c.next(), ++i) {
    int64_t src = 0;
    for (size_t d = 0; d < dims.size(); ++d) {
      src += (slices[d].start + c.coords()[d] * slices[d].step) * strides[d];
    }
    copy_elements(in, src, *out, i);
  }
  return Status::ok();
}

}  // namespace

void register_slice(OpRegistry& registry) {
  OpSchema s;
  s.name = "Slice";
  s.doc = "a strided slice along some axes";
  s.inputs = {{"data"}, {"starts"}, {"ends"}, {"axes", true}, {"steps", true}};
  s.outputs = {{"output"}};
  s.infer = infer_slice;
  s.reference = run_slice;
  register_or_die(registry, std::move(s));
}

}  // namespace seqrt
