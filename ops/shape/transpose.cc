// Transpose: output dim i is input dim perm[i]; perm defaults to the
// reversed dims.
#include <algorithm>
#include <numeric>

#include "ops/registry.h"
#include "ops/shape/shape_util.h"
#include "ops/util.h"

namespace seqrt {
namespace {

Result<std::vector<int64_t>> permutation(const OpContext& ctx, size_t rank) {
  std::vector<int64_t> perm(rank);
  if (!ctx.has_attr("perm")) {
    std::iota(perm.rbegin(), perm.rend(), 0);
    return perm;
  }
  perm = ctx.attr_ints("perm");
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  bool valid = perm.size() == rank;
  for (size_t i = 0; valid && i < rank; ++i) {
    valid = sorted[i] == static_cast<int64_t>(i);
  }
  if (!valid) {
    return ctx.error("perm {} is not a permutation of the {} input dims",
                     dims_to_string(perm), rank);
  }
  return perm;
}

Status infer_transpose(InferContext& ctx) {
  DType dtype = ctx.input_dtype(0);
  const std::optional<Shape>& in = ctx.input_shape(0);
  if (!in) {
    std::optional<Shape> out;
    if (ctx.has_attr("perm")) out = unknown_shape(ctx.attr_ints("perm").size());
    ctx.set_output(0, dtype, out);
    return Status::ok();
  }
  SEQRT_ASSIGN_OR_RETURN(std::vector<int64_t> perm,
                         permutation(ctx, in->rank()));
  std::vector<Dim> out;
  for (int64_t axis : perm) out.push_back((*in)[axis]);
  ctx.set_output(0, dtype, Shape(std::move(out)));
  return Status::ok();
}

Status run_transpose(KernelContext& ctx) {
  const Tensor& in = *ctx.input(0);
  SEQRT_ASSIGN_OR_RETURN(std::vector<int64_t> perm,
                         permutation(ctx, in.rank()));
  std::vector<int64_t> dims;
  for (int64_t axis : perm) dims.push_back(in.dim(axis));
  SEQRT_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocate_output(0, in.dtype(), dims));
  std::vector<int64_t> in_strides = strides_of(in.dims());
  int64_t i = 0;
  for (CoordinateCounter c(dims); !c.done(); c.next(), ++i) {
    int64_t src = 0;
    for (size_t d = 0; d < perm.size(); ++d) {
      src += c.coords()[d] * in_strides[perm[d]];
    }
    copy_elements(in, src, *out, i);
  }
  return Status::ok();
}

}  // namespace

void register_transpose(OpRegistry& registry) {
  OpSchema s;
  s.name = "Transpose";
  s.doc = "permutes the dims (default: reverses them)";
  s.inputs = {{"data"}};
  s.outputs = {{"transposed"}};
  s.attrs = {{"perm", AttrType::kInts}};
  s.infer = infer_transpose;
  s.reference = run_transpose;
  register_or_die(registry, std::move(s));
}

}  // namespace seqrt
