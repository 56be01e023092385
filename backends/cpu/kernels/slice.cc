// CPU kernel of Slice, generic over dtypes: a Slice that is one contiguous
// run of its input shares the input's storage (the memory plan expects that
// view); any other is a strided copy (strided_copy.h), negative steps
// included.
#include <algorithm>
#include <numeric>
#include <vector>

#include "backends/cpu/kernel_table.h"
#include "backends/cpu/kernels/inferred_dims.h"
#include "backends/cpu/kernels/strided_copy.h"
#include "ops/shape/shape_util.h"
#include "ops/util.h"

namespace seqrt::cpu {
namespace {

// The first kept index of one sliced axis, as the reference clamps it
// (ops/shape/slice.cc); the count comes from inference.
int64_t slice_start(int64_t dim, int64_t start, int64_t step) {
  if (start < 0) start += dim;
  if (step > 0) return std::clamp<int64_t>(start, 0, dim);
  return std::clamp<int64_t>(start, 0, std::max<int64_t>(dim - 1, 0));
}

// True when the strided view of `dims` is one run of consecutive elements:
// every axis of more than one element steps over exactly the elements of
// the axes after it. An empty view is not worth a view.
bool is_contiguous_run(const std::vector<int64_t>& dims,
                       const std::vector<int64_t>& strides) {
  int64_t inner = 1;
  for (size_t d = dims.size(); d-- > 0;) {
    if (dims[d] == 0) return false;
    if (dims[d] > 1 && strides[d] != inner) return false;
    inner *= dims[d];
  }
  return true;
}

Status run_slice(KernelContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(std::vector<int64_t> dims, inferred_dims(ctx));
  const Tensor& in = *ctx.input(0);
  int64_t rank = static_cast<int64_t>(in.rank());
  SEQRT_ASSIGN_OR_RETURN(auto starts,
                         read_int_list(ctx, *ctx.input(1), "starts"));
  std::vector<int64_t> axes(starts.size());
  std::iota(axes.begin(), axes.end(), 0);
  if (ctx.has_input(3)) {
    SEQRT_ASSIGN_OR_RETURN(axes, read_int_list(ctx, *ctx.input(3), "axes"));
    SEQRT_ASSIGN_OR_RETURN(axes, normalize_axes(ctx, axes, rank));
  }
  std::vector<int64_t> steps(starts.size(), 1);
  if (ctx.has_input(4)) {
    SEQRT_ASSIGN_OR_RETURN(steps, read_int_list(ctx, *ctx.input(4), "steps"));
  }
  std::vector<int64_t> in_strides = strides_of(in.dims());
  std::vector<int64_t> strides = in_strides;
  int64_t base = 0;
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t axis = axes[i];
    if (dims[axis] == 0) continue;
    // Steps past 2^62 keep one element either way (see the reference).
    int64_t step =
        std::clamp<int64_t>(steps[i], -(int64_t{1} << 62), int64_t{1} << 62);
    base += slice_start(in.dim(axis), starts[i], step) * in_strides[axis];
    strides[axis] = dims[axis] == 1 ? 0 : step * in_strides[axis];
  }
  if (is_contiguous_run(dims, strides)) {
    // One run of the input's bytes: a view, as the memory plan expects
    // (compiler/planner/slice_view.h), rather than a copy.
    SEQRT_ASSIGN_OR_RETURN(
        Tensor out,
        in.slice_view(base * static_cast<int64_t>(dtype_size(in.dtype())),
                      std::move(dims)));
    ctx.set_output(0, std::move(out));
    return Status::ok();
  }
  return run_strided(ctx, dims, strides, base);
}

}  // namespace

void register_slice_kernels(KernelTable& table) {
  table.add(CpuKernel{kOnnxDomain, "Slice", run_slice, nullptr});
}

}  // namespace seqrt::cpu
