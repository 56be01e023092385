// CPU kernel of GatherElements, generic over dtypes (the bytes of each
// element move unchanged); indices checked, rows split by row_split.h.
#include <cstring>
#include <vector>

#include "backends/cpu/kernel_table.h"
#include "backends/cpu/kernels/float_support.h"
#include "backends/cpu/kernels/inferred_dims.h"
#include "backends/cpu/kernels/row_split.h"
#include "ops/util.h"

namespace seqrt::cpu {
namespace {

template <typename T>
void gather_elements(const Tensor& data, const std::vector<int64_t>& idx,
                     int64_t axis, const std::vector<int64_t>& out_dims,
                     T* out) {
  const T* src = static_cast<const T*>(data.data());
  const std::vector<int64_t> strides = strides_of(data.dims());
  const size_t last = out_dims.size() - 1;
  const int64_t length = out_dims.back();
  parallel_chunks(
      num_rows(out_dims), row_grain(out_dims), [&](int64_t begin, int64_t end) {
        std::vector<int64_t> coords(out_dims.size(), 0);
        for (int64_t row = begin; row < end; ++row) {
          row_coords(out_dims, row, coords);
          int64_t base = 0;
          for (size_t d = 0; d < last; ++d) {
            if (static_cast<int64_t>(d) != axis) base += coords[d] * strides[d];
          }
          const int64_t* index = idx.data() + row * length;
          T* dst = out + row * length;
          if (static_cast<size_t>(axis) == last) {
            for (int64_t j = 0; j < length; ++j) dst[j] = src[base + index[j]];
          } else {
            const int64_t step = strides[last];
            const int64_t axis_stride = strides[axis];
            for (int64_t j = 0; j < length; ++j) {
              dst[j] = src[base + j * step + index[j] * axis_stride];
            }
          }
        }
      });
}

Status run_gather_elements(KernelContext& ctx) {
  const Tensor& data = *ctx.input(0);
  const Tensor& indices = *ctx.input(1);
  SEQRT_ASSIGN_OR_RETURN(std::vector<int64_t> out_dims, inferred_dims(ctx));
  if (data.rank() == 0) return ctx.error("data must have rank >= 1");
  SEQRT_ASSIGN_OR_RETURN(int64_t axis,
                         normalize_axis(ctx, ctx.attr_int("axis"),
                                        static_cast<int64_t>(data.rank())));
  if (indices.rank() != data.rank() || out_dims != indices.dims()) {
    return ctx.error("indices {} do not fit data {}",
                     dims_to_string(indices.dims()),
                     dims_to_string(data.dims()));
  }
  for (size_t d = 0; d < data.rank(); ++d) {
    if (static_cast<int64_t>(d) != axis && indices.dim(d) > data.dim(d)) {
      return ctx.error("indices {} do not fit data {} off axis {}",
                       dims_to_string(indices.dims()),
                       dims_to_string(data.dims()), axis);
    }
  }
  // Indices checked and made non-negative before the parallel copy.
  const int64_t size = data.dim(axis);
  std::vector<int64_t> idx(static_cast<size_t>(indices.num_elements()));
  for (size_t i = 0; i < idx.size(); ++i) {
    int64_t index = indices.element_i64(static_cast<int64_t>(i));
    if (index < -size || index >= size) {
      return ctx.error(
          "index {} is out of range [{}, {}] for axis {} of size {}", index,
          -size, size - 1, axis, size);
    }
    idx[i] = index < 0 ? index + size : index;
  }
  SEQRT_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocate_output(0, data.dtype(), out_dims));
  if (out->num_elements() == 0) return Status::ok();
  void* dst = out->mutable_data();
  switch (dtype_size(data.dtype())) {
    case 1:
      gather_elements(data, idx, axis, out_dims, static_cast<uint8_t*>(dst));
      break;
    case 2:
      gather_elements(data, idx, axis, out_dims, static_cast<uint16_t*>(dst));
      break;
    case 4:
      gather_elements(data, idx, axis, out_dims, static_cast<uint32_t*>(dst));
      break;
    case 8:
      gather_elements(data, idx, axis, out_dims, static_cast<uint64_t*>(dst));
      break;
    default:
      return ctx.unsupported_error("{} elements", dtype_name(data.dtype()));
  }
  return Status::ok();
}

}  // namespace

void register_gather_elements_kernels(KernelTable& table) {
  table.add(
      CpuKernel{kOnnxDomain, "GatherElements", run_gather_elements, nullptr});
}

}  // namespace seqrt::cpu
