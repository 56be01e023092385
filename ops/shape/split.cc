// Split: the input cut along `axis` into the node's outputs. Sizes come
// from the optional 1-D input `split`, or else from attribute num_outputs
// (parts of ceil(dim / num_outputs), the last one smaller), or else (as
// before opset 18) equal parts, one per output.
#include "ops/registry.h"
#include "ops/shape/shape_util.h"
#include "ops/util.h"

namespace seqrt {
namespace {

Status check_mode(const OpContext& ctx, bool has_split, size_t num_outputs) {
  if (!ctx.has_attr("num_outputs")) return Status::ok();
  if (has_split) {
    return ctx.error("input 'split' and attribute num_outputs are both set");
  }
  int64_t wanted = ctx.attr_int("num_outputs");
  if (wanted != static_cast<int64_t>(num_outputs)) {
    return ctx.error("num_outputs is {} but the node has {} outputs", wanted,
                     num_outputs);
  }
  return Status::ok();
}

// Sizes given by input 'split'; the sum is checked when `dim` is known.
Result<std::vector<int64_t>> given_sizes(const OpContext& ctx,
                                         const std::vector<int64_t>& split,
                                         size_t num_outputs,
                                         std::optional<int64_t> dim) {
  if (split.size() != num_outputs) {
    return ctx.error("split {} has {} sizes but the node has {} outputs",
                     dims_to_string(split), split.size(), num_outputs);
  }
  int64_t sum = 0;
  for (int64_t size : split) {
    if (size < 0 || size > kMaxElements) {
      return ctx.error("split {} has a bad size {}", dims_to_string(split),
                       size);
    }
    sum += size;
    if (sum > kMaxElements) {
      return ctx.error("split {} sums past 2^48", dims_to_string(split));
    }
  }
  if (dim && sum != *dim) {
    return ctx.error("split {} sums to {} but the axis has size {}",
                     dims_to_string(split), sum, *dim);
  }
  return split;
}

// Sizes without input 'split': ceil-sized parts, the last one smaller.
Result<std::vector<int64_t>> even_sizes(const OpContext& ctx, int64_t dim,
                                        size_t num_outputs) {
  int64_t n = static_cast<int64_t>(num_outputs);
  if (!ctx.has_attr("num_outputs") && dim % n != 0) {
    return ctx.error("axis of size {} does not split evenly into {} outputs",
                     dim, n);
  }
  int64_t part = (dim + n - 1) / n;
  int64_t last = dim - part * (n - 1);
  if (last < 0) {
    return ctx.error("axis of size {} cannot be split into {} parts of size {}",
                     dim, n, part);
  }
  std::vector<int64_t> sizes(num_outputs, part);
  sizes.back() = last;
  return sizes;
}

Status infer_split(InferContext& ctx) {
  DType dtype = ctx.input_dtype(0);
  size_t n = ctx.num_outputs();
  SEQRT_RETURN_IF_ERROR(check_mode(ctx, ctx.has_input(1), n));
  SEQRT_ASSIGN_OR_RETURN(auto split, known_int_list(ctx, 1, "split"));
  const std::optional<Shape>& in = ctx.input_shape(0);
  if (!in) {
    for (size_t i = 0; i < n; ++i) ctx.set_output(i, dtype, std::nullopt);
    return Status::ok();
  }
  if (in->rank() == 0) return ctx.error("cannot split a scalar");
  SEQRT_ASSIGN_OR_RETURN(int64_t axis,
                         normalize_axis(ctx, ctx.attr_int("axis"),
                                        static_cast<int64_t>(in->rank())));
  const Dim& dim = (*in)[axis];
  SEQRT_RETURN_IF_ERROR(check_dim_size(ctx, dim));
  std::optional<int64_t> fixed;
  if (dim.is_fixed()) fixed = dim.value();
  std::vector<Dim> sizes(n, Dim::unknown());
  if (split) {
    SEQRT_ASSIGN_OR_RETURN(auto given, given_sizes(ctx, *split, n, fixed));
    sizes.assign(given.begin(), given.end());
  } else if (fixed && !ctx.has_input(1)) {
    SEQRT_ASSIGN_OR_RETURN(auto even, even_sizes(ctx, *fixed, n));
    sizes.assign(even.begin(), even.end());
  } else if (n == 1 && !ctx.has_input(1)) {
    sizes[0] = dim;
  }
  for (size_t i = 0; i < n; ++i) {
    Shape out = *in;
    out[axis] = sizes[i];
    ctx.set_output(i, dtype, out);
  }
  return Status::ok();
}

Status run_split(KernelContext& ctx) {
  const Tensor& in = *ctx.input(0);
  size_t n = ctx.num_outputs();
  SEQRT_RETURN_IF_ERROR(check_mode(ctx, ctx.has_input(1), n));
  if (in.rank() == 0) return ctx.error("cannot split a scalar");
  SEQRT_ASSIGN_OR_RETURN(int64_t axis,
                         normalize_axis(ctx, ctx.attr_int("axis"),
                                        static_cast<int64_t>(in.rank())));
  std::vector<int64_t> sizes;
  if (ctx.has_input(1)) {
    SEQRT_ASSIGN_OR_RETURN(auto split,
                           read_int_list(ctx, *ctx.input(1), "split"));
    SEQRT_ASSIGN_OR_RETURN(sizes, given_sizes(ctx, split, n, in.dim(axis)));
  } else {
    SEQRT_ASSIGN_OR_RETURN(sizes, even_sizes(ctx, in.dim(axis), n));
  }
  int64_t inner = 1;
  for (size_t d = axis + 1; d < in.rank(); ++d) inner *= in.dim(d);
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= in.dim(d);
  int64_t in_row = in.dim(axis) * inner;
  int64_t offset = 0;
  for (size_t i = 0; i < n; ++i) {
    std::vector<int64_t> dims = in.dims();
    dims[axis] = sizes[i];
    SEQRT_ASSIGN_OR_RETURN(Tensor * out,
                           ctx.allocate_output(i, in.dtype(), dims));
    int64_t row = sizes[i] * inner;
    for (int64_t o = 0; o < outer; ++o) {
      copy_elements(in, o * in_row + offset, *out, o * row, row);
    }
    offset += row;
  }
  return Status::ok();
}

}  // namespace

void register_split(OpRegistry& registry) {
  OpSchema s;
  s.name = "Split";
  s.doc = "the input cut along one axis into the outputs";
  s.inputs = {{"input"}, {"split", true}};
  s.outputs = {{"outputs", false, true}};
  s.attrs = {{"axis", AttrType::kInt, Attribute(0)},
             {"num_outputs", AttrType::kInt}};
  s.infer = infer_split;
  s.reference = run_split;
  register_or_die(registry, std::move(s));
}

}  // namespace seqrt
