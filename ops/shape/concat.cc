// Concat: the inputs joined along `axis`; every other dim must agree.
#include "ops/registry.h"
#include "ops/shape/shape_util.h"
#include "ops/util.h"

namespace seqrt {
namespace {

// Merges dim `d` of two inputs that must be equal.
Result<Dim> merge_dim(const OpContext& ctx, const Dim& a, const Dim& b,
                      size_t d) {
  if (a.is_fixed() && b.is_fixed() && a != b) {
    return ctx.error(
        "inputs differ in dim {} ({} vs {}) outside the concat axis", d,
        a.value(), b.value());
  }
  return a.is_fixed() || b.is_unknown() ? a : b;
}

// Concatenated elements of 1-D inputs known symbolically ([-1] and
// [seq] give [-1, seq]).
void concat_symbolic(InferContext& ctx) {
  std::vector<DimExpr> out;
  for (size_t k = 0; k < ctx.num_inputs(); ++k) {
    std::optional<std::vector<DimExpr>> part = ctx.input_symbolic(k);
    if (!part) return;
    out.insert(out.end(), part->begin(), part->end());
  }
  if (static_cast<int64_t>(out.size()) <= kMaxSymbolicElements) {
    ctx.set_output_symbolic(0, std::move(out));
  }
}

Status infer_concat(InferContext& ctx) {
  DType dtype = ctx.input_dtype(0);
  std::optional<Shape> out;
  int64_t axis = 0;
  for (size_t k = 0; k < ctx.num_inputs(); ++k) {
    if (ctx.input_dtype(k) != dtype) {
      return ctx.error("input {} is {} but input 0 is {}", k,
                       dtype_name(ctx.input_dtype(k)), dtype_name(dtype));
    }
    const std::optional<Shape>& shape = ctx.input_shape(k);
    if (!shape) continue;
    if (shape->rank() == 0) return ctx.error("cannot concatenate scalars");
    if (!out) {
      SEQRT_ASSIGN_OR_RETURN(
          axis, normalize_axis(ctx, ctx.attr_int("axis"),
                               static_cast<int64_t>(shape->rank())));
      out = *shape;
      continue;
    }
    if (shape->rank() != out->rank()) {
      return ctx.error("input {} has rank {} but an earlier input has rank {}",
                       k, shape->rank(), out->rank());
    }
    for (size_t d = 0; d < out->rank(); ++d) {
      const Dim& a = (*out)[d];
      const Dim& b = (*shape)[d];
      if (static_cast<int64_t>(d) != axis) {
        SEQRT_ASSIGN_OR_RETURN((*out)[d], merge_dim(ctx, a, b, d));
      } else if (a.is_fixed() && b.is_fixed()) {
        SEQRT_RETURN_IF_ERROR(check_dim_size(ctx, a));
        SEQRT_RETURN_IF_ERROR(check_dim_size(ctx, b));
        (*out)[d] = Dim(a.value() + b.value());  // at most 2^49
      } else {
        (*out)[d] = dim_add(a, b);  // (past) + (seq) keys give past+seq
      }
    }
  }
  // An input of unknown rank leaves the concat axis's size unknown.
  for (size_t k = 0; out && k < ctx.num_inputs(); ++k) {
    if (!ctx.input_shape(k)) (*out)[axis] = Dim::unknown();
  }
  ctx.set_output(0, dtype, out);
  concat_symbolic(ctx);
  return Status::ok();
}

// The output dims; checks dtypes, ranks and the dims off the axis.
Result<std::vector<int64_t>> concat_dims(const KernelContext& ctx,
                                         int64_t axis) {
  const Tensor& first = *ctx.input(0);
  std::vector<int64_t> dims = first.dims();
  dims[axis] = 0;
  for (size_t k = 0; k < ctx.num_inputs(); ++k) {
    const Tensor& in = *ctx.input(k);
    if (in.dtype() != first.dtype() || in.rank() != first.rank()) {
      return ctx.error("input {} is {}{} but input 0 is {}{}", k,
                       dtype_name(in.dtype()), dims_to_string(in.dims()),
                       dtype_name(first.dtype()), dims_to_string(first.dims()));
    }
    for (size_t d = 0; d < in.rank(); ++d) {
      if (static_cast<int64_t>(d) != axis && in.dim(d) != first.dim(d)) {
        return ctx.error(
            "input {} has shape {} but input 0 has {}; only dim {} may differ",
            k, dims_to_string(in.dims()), dims_to_string(first.dims()), axis);
      }
    }
    dims[axis] += in.dim(axis);
  }
  return dims;
}

Status run_concat(KernelContext& ctx) {
  const Tensor& first = *ctx.input(0);
  if (first.rank() == 0) return ctx.error("cannot concatenate scalars");
  SEQRT_ASSIGN_OR_RETURN(int64_t axis,
                         normalize_axis(ctx, ctx.attr_int("axis"),
                                        static_cast<int64_t>(first.rank())));
  SEQRT_ASSIGN_OR_RETURN(std::vector<int64_t> dims, concat_dims(ctx, axis));
  SEQRT_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocate_output(0, first.dtype(), dims));
  // Each input contributes one contiguous run of elements per outer index.
  int64_t inner_size = 1;
  for (size_t d = axis + 1; d < dims.size(); ++d) inner_size *= dims[d];
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= dims[d];
  int64_t out_row = dims[axis] * inner_size;
  int64_t offset = 0;
  for (size_t k = 0; k < ctx.num_inputs(); ++k) {
    const Tensor& in = *ctx.input(k);
    int64_t row = in.dim(axis) * inner_size;
    for (int64_t o = 0; o < outer; ++o) {
      copy_elements(in, o * row, *out, o * out_row + offset, row);
    }
    offset += row;
  }
  return Status::ok();
}

}  // namespace

void register_concat(OpRegistry& registry) {
  OpSchema s;
  s.name = "Concat";
  s.doc = "the inputs joined along one axis";
  s.inputs = {{"inputs", false, true}};
  s.outputs = {{"concat_result"}};
  s.attrs = {{"axis", AttrType::kInt, std::nullopt, true}};
  s.infer = infer_concat;
  s.reference = run_concat;
  register_or_die(registry, std::move(s));
}

}  // namespace seqrt
