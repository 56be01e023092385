// CPU kernels of the data-movement ops, generic over dtypes (bytes):
// Identity, Reshape, Flatten, Squeeze and Unsqueeze share the input's
// storage under new dims, and so does a Slice that is one contiguous run of
// its input; Transpose, Expand, other Slices and Split copy strided views
// with memcpy of the contiguous runs; Concat and Gather copy blocks.
// Output dims (and every shape error) come from the op's own inference run on
// the concrete input shapes and values, so they cannot drift from the
// reference. f32 Transpose and Concat go to oneDNN's reorder and concat
// primitives where the measurement chose them (../onednn/selection.h).
#include <algorithm>
#include <cstring>
#include <numeric>
#include <vector>

#include "backends/cpu/kernel_table.h"
#include "backends/cpu/kernels/float_support.h"
#include "backends/cpu/kernels/inferred_dims.h"
#include "backends/cpu/onednn/concat.h"
#include "backends/cpu/onednn/reorder.h"
#include "backends/cpu/onednn/selection.h"
#include "ops/op_schema.h"
#include "ops/shape/shape_util.h"
#include "ops/util.h"

namespace seqrt::cpu {
namespace {

// Same elements, new dims: the output shares the input's storage.
Status run_reshape_like(KernelContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(std::vector<int64_t> dims, inferred_dims(ctx));
  SEQRT_ASSIGN_OR_RETURN(Tensor out, ctx.input(0)->reshaped(std::move(dims)));
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

// Copies the strided view in[Σ c_d·strides_d] of `dims` into the
// contiguous `out`: axes are merged where the view is contiguous across
// them, and runs along a unit-stride last axis are one memcpy each.
void copy_view(const char* in, const std::vector<int64_t>& dims,
               const std::vector<int64_t>& strides, size_t element, char* out) {
  std::vector<int64_t> d, s;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 1) continue;
    if (!d.empty() && s.back() == strides[i] * dims[i]) {
      d.back() *= dims[i];
      s.back() = strides[i];
      continue;
    }
    d.push_back(dims[i]);
    s.push_back(strides[i]);
  }
  if (d.empty()) {
    d = {1};
    s = {1};
  }
  int64_t total = 1;
  for (int64_t n : dims) total *= n;
  const int64_t length = d.back();
  const int64_t runs = length == 0 ? 0 : total / length;
  const bool contiguous = s.back() == 1;
  const size_t outer = d.size() - 1;
  parallel_chunks(runs, 256, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      int64_t rest = r;
      int64_t offset = 0;
      for (size_t i = outer; i-- > 0;) {
        offset += (rest % d[i]) * s[i];
        rest /= d[i];
      }
      char* dst = out + static_cast<size_t>(r * length) * element;
      // Signed byte offsets: negative strides (reversed slices) step back.
      const int64_t bytes = static_cast<int64_t>(element);
      if (contiguous) {
        std::memcpy(dst, in + offset * bytes, length * element);
        continue;
      }
      for (int64_t j = 0; j < length; ++j) {
        std::memcpy(dst + j * element, in + (offset + j * s.back()) * bytes,
                    element);
      }
    }
  });
}

// Output `i` as the view of input 0 at element `base` with `strides`.
Status run_strided(KernelContext& ctx, const std::vector<int64_t>& dims,
                   const std::vector<int64_t>& strides, int64_t base = 0,
                   size_t i = 0) {
  const Tensor& in = *ctx.input(0);
  SEQRT_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocate_output(i, in.dtype(), dims));
  if (out->num_elements() == 0) return Status::ok();
  size_t element = dtype_size(in.dtype());
  copy_view(static_cast<const char*>(in.data()) + base * element, dims, strides,
            element, static_cast<char*>(out->mutable_data()));
  return Status::ok();
}

Status run_transpose(KernelContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(std::vector<int64_t> dims, inferred_dims(ctx));
  const Tensor& in = *ctx.input(0);
  std::vector<int64_t> perm(in.rank());
  if (ctx.has_attr("perm")) {
    perm = ctx.attr_ints("perm");
  } else {
    std::iota(perm.rbegin(), perm.rend(), 0);
  }
  std::vector<int64_t> in_strides = strides_of(in.dims());
  std::vector<int64_t> strides;
  for (int64_t p : perm) strides.push_back(in_strides[p]);
  // With the last axis in place the own copy moves contiguous runs; moved,
  // it copies element by element, where oneDNN's reorder is far faster.
  const onednn::OpClass op_class =
      !perm.empty() && perm.back() == static_cast<int64_t>(in.rank()) - 1
          ? onednn::OpClass::kTransposeKeepingLastAxis
          : onednn::OpClass::kTranspose;
  if (in.dtype() == DType::kF32 &&
      onednn::use_onednn(op_class, in.num_elements())) {
    SEQRT_ASSIGN_OR_RETURN(Tensor * out,
                           ctx.allocate_output(0, in.dtype(), dims));
    SEQRT_ASSIGN_OR_RETURN(
        bool ran, onednn::strided_copy(ctx.node().label(), dims, strides,
                                       in.data_as<float>(),
                                       out->mutable_data_as<float>()));
    if (ran) return Status::ok();
  }
  return run_strided(ctx, dims, strides);
}

Status run_expand(KernelContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(std::vector<int64_t> dims, inferred_dims(ctx));
  return run_strided(ctx, dims, broadcast_strides(ctx.input(0)->dims(), dims));
}

// Concat of f32 inputs on oneDNN's concat primitive when the measurement
// chose it. False: the own copy loop runs the node.
Result<bool> run_onednn_concat(KernelContext& ctx,
                               const std::vector<int64_t>& dims, int64_t axis) {
  std::vector<std::vector<int64_t>> in_dims;
  std::vector<const float*> srcs;
  for (size_t k = 0; k < ctx.num_inputs(); ++k) {
    const Tensor& in = *ctx.input(k);
    if (in.dtype() != DType::kF32) return false;
    in_dims.push_back(in.dims());
    srcs.push_back(in.data_as<float>());
  }
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  if (!onednn::use_onednn(onednn::OpClass::kConcat, count)) return false;
  SEQRT_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocate_output(0, DType::kF32, dims));
  return onednn::concat(ctx.node().label(), in_dims, srcs, axis,
                        out->mutable_data_as<float>());
}

Status run_concat(KernelContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(std::vector<int64_t> dims, inferred_dims(ctx));
  const Tensor& first = *ctx.input(0);
  SEQRT_ASSIGN_OR_RETURN(int64_t axis,
                         normalize_axis(ctx, ctx.attr_int("axis"),
                                        static_cast<int64_t>(first.rank())));
  SEQRT_ASSIGN_OR_RETURN(bool ran, run_onednn_concat(ctx, dims, axis));
  if (ran) return Status::ok();
  SEQRT_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocate_output(0, first.dtype(), dims));
  const size_t element = dtype_size(first.dtype());
  int64_t outer = 1;
  int64_t inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= dims[d];
  for (size_t d = axis + 1; d < dims.size(); ++d) inner *= dims[d];
  const size_t out_row = static_cast<size_t>(dims[axis] * inner) * element;
  char* dst = static_cast<char*>(out->mutable_data());
  size_t offset = 0;  // bytes into each output row
  for (size_t k = 0; k < ctx.num_inputs(); ++k) {
    const Tensor& in = *ctx.input(k);
    const size_t row = static_cast<size_t>(in.dim(axis) * inner) * element;
    const char* src = static_cast<const char*>(in.data());
    if (row > 0) {
      parallel_chunks(outer, 1024, [&](int64_t begin, int64_t end) {
        for (int64_t o = begin; o < end; ++o) {
          std::memcpy(dst + o * out_row + offset, src + o * row, row);
        }
      });
    }
    offset += row;
  }
  return Status::ok();
}

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

Status run_gather(KernelContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(std::vector<int64_t> dims, inferred_dims(ctx));
  const Tensor& data = *ctx.input(0);
  const Tensor& indices = *ctx.input(1);
  SEQRT_ASSIGN_OR_RETURN(int64_t axis,
                         normalize_axis(ctx, ctx.attr_int("axis"),
                                        static_cast<int64_t>(data.rank())));
  int64_t size = data.dim(axis);
  int64_t count = indices.num_elements();
  std::vector<int64_t> picked(static_cast<size_t>(count));
  for (int64_t j = 0; j < count; ++j) {
    int64_t index = indices.element_i64(j);
    if (index < -size || index >= size) {
      return ctx.error("index {} is out of range for axis {} of size {}", index,
                       axis, size);
    }
    picked[j] = index < 0 ? index + size : index;
  }
  SEQRT_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocate_output(0, data.dtype(), dims));
  int64_t outer = 1;
  int64_t inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= data.dim(d);
  for (size_t d = axis + 1; d < data.rank(); ++d) inner *= data.dim(d);
  const size_t block = static_cast<size_t>(inner) * dtype_size(data.dtype());
  if (block == 0 || count == 0) return Status::ok();
  const char* src = static_cast<const char*>(data.data());
  char* dst = static_cast<char*>(out->mutable_data());
  parallel_chunks(outer * count, 256, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      int64_t o = r / count;
      int64_t j = r % count;
      std::memcpy(dst + r * block, src + (o * size + picked[j]) * block, block);
    }
  });
  return Status::ok();
}

// Each output is the slice of input 0 along `axis` after the earlier ones.
Status run_split(KernelContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(auto dims, inferred_output_dims(ctx));
  const Tensor& in = *ctx.input(0);
  SEQRT_ASSIGN_OR_RETURN(int64_t axis,
                         normalize_axis(ctx, ctx.attr_int("axis"),
                                        static_cast<int64_t>(in.rank())));
  std::vector<int64_t> strides = strides_of(in.dims());
  int64_t start = 0;
  for (size_t i = 0; i < dims.size(); ++i) {
    SEQRT_RETURN_IF_ERROR(
        run_strided(ctx, dims[i], strides, start * strides[axis], i));
    start += dims[i][axis];
  }
  return Status::ok();
}

}  // namespace

void register_data_movement_kernels(KernelTable& table) {
  for (const char* op :
       {"Identity", "Reshape", "Flatten", "Squeeze", "Unsqueeze"}) {
    table.add(CpuKernel{kOnnxDomain, op, run_reshape_like, nullptr});
  }
  table.add(CpuKernel{kOnnxDomain, "Transpose", run_transpose, nullptr});
  table.add(CpuKernel{kOnnxDomain, "Expand", run_expand, nullptr});
  table.add(CpuKernel{kOnnxDomain, "Concat", run_concat, nullptr});
  table.add(CpuKernel{kOnnxDomain, "Slice", run_slice, nullptr});
  table.add(CpuKernel{kOnnxDomain, "Gather", run_gather, nullptr});
  table.add(CpuKernel{kOnnxDomain, "Split", run_split, nullptr});
}

}  // namespace seqrt::cpu
