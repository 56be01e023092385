// CPU kernels of the indexing and padding ops, generic over dtypes (the
// bytes of each element move unchanged): GatherElements, Pad (constant,
// reflect, edge, wrap), Tile and Trilu. Output dims come from the op's own
// inference on the concrete inputs; the work is split into rows (all dims
// but the last) spread over the threads, and each row copies its
// contiguous parts with memcpy.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "backends/cpu/kernel_table.h"
#include "backends/cpu/kernels/float_support.h"
#include "backends/cpu/kernels/inferred_dims.h"
#include "ops/shape/shape_util.h"
#include "ops/util.h"

namespace seqrt::cpu {
namespace {

constexpr int64_t kGrain = 16384;

// Rows of `dims` (every dim but the last) per parallel task.
int64_t row_grain(const std::vector<int64_t>& dims) {
  int64_t length = dims.empty() ? 1 : std::max<int64_t>(dims.back(), 1);
  return std::max<int64_t>(1, kGrain / length);
}

int64_t num_rows(const std::vector<int64_t>& dims) {
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < dims.size(); ++d) rows *= dims[d];
  return dims.empty() || dims.back() == 0 ? 0 : rows;
}

// The coordinates of row `row` (all dims but the last).
void row_coords(const std::vector<int64_t>& dims, int64_t row,
                std::vector<int64_t>& coords) {
  for (size_t d = dims.size() - 1; d-- > 0;) {
    coords[d] = row % dims[d];
    row /= dims[d];
  }
}

// --- GatherElements ----------------------------------------------------------

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

// --- Pad ---------------------------------------------------------------------

// Source index along one axis for padded position `i`, or -1 for the
// constant (the reference's rule).
int64_t source_index(const std::string& mode, int64_t i, int64_t dim) {
  if (i >= 0 && i < dim) return i;
  if (mode == "constant") return -1;
  if (mode == "edge") return i < 0 ? 0 : dim - 1;
  if (mode == "wrap") return ((i % dim) + dim) % dim;
  if (dim == 1) return 0;  // reflect: period 2 * (dim - 1)
  int64_t period = 2 * (dim - 1);
  int64_t m = ((i % period) + period) % period;
  return m < dim ? m : period - m;
}

Status run_pad(KernelContext& ctx) {
  const Tensor& in = *ctx.input(0);
  SEQRT_ASSIGN_OR_RETURN(std::vector<int64_t> dims, inferred_dims(ctx));
  SEQRT_ASSIGN_OR_RETURN(auto pads, read_int_list(ctx, *ctx.input(1), "pads"));
  std::vector<int64_t> axes;
  if (ctx.has_input(3)) {
    SEQRT_ASSIGN_OR_RETURN(axes, read_int_list(ctx, *ctx.input(3), "axes"));
  } else {
    for (size_t d = 0; d < in.rank(); ++d)
      axes.push_back(static_cast<int64_t>(d));
  }
  SEQRT_ASSIGN_OR_RETURN(
      axes, normalize_axes(ctx, axes, static_cast<int64_t>(in.rank())));
  const Tensor* fill = ctx.input(2);
  if (fill && (fill->dtype() != in.dtype() || fill->num_elements() != 1)) {
    return ctx.error("constant_value must be one {} value",
                     dtype_name(in.dtype()));
  }
  SEQRT_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocate_output(0, in.dtype(), dims));
  if (out->num_elements() == 0) return Status::ok();
  if (in.rank() == 0) {  // nothing to pad: the scalar itself
    std::memcpy(out->mutable_data(), in.data(), dtype_size(in.dtype()));
    return Status::ok();
  }
  std::vector<int64_t> begin(in.rank(), 0);
  for (size_t i = 0; i < axes.size(); ++i) begin[axes[i]] = pads[i];
  const std::string& mode = ctx.attr_string("mode");
  // Per axis, the source index of every output position (-1: constant).
  std::vector<std::vector<int64_t>> maps(in.rank());
  for (size_t d = 0; d < in.rank(); ++d) {
    for (int64_t i = 0; i < dims[d]; ++i) {
      maps[d].push_back(source_index(mode, i - begin[d], in.dim(d)));
    }
  }
  const size_t element = dtype_size(in.dtype());
  const std::vector<int64_t> strides = strides_of(in.dims());
  const size_t last = in.rank() - 1;
  const int64_t length = dims.back();
  const auto* src = static_cast<const uint8_t*>(in.data());
  auto* dst = static_cast<uint8_t*>(out->mutable_data());
  const std::vector<int64_t>& inner = maps[last];
  parallel_chunks(num_rows(dims), row_grain(dims), [&](int64_t b, int64_t e) {
    std::vector<int64_t> coords(dims.size(), 0);
    for (int64_t row = b; row < e; ++row) {
      row_coords(dims, row, coords);
      int64_t base = 0;
      for (size_t d = 0; d < last && base >= 0; ++d) {
        int64_t index = maps[d][coords[d]];
        base = index < 0 ? -1 : base + index * strides[d];
      }
      uint8_t* out_row = dst + static_cast<size_t>(row * length) * element;
      for (int64_t j = 0; j < length; ++j) {
        int64_t index = base < 0 ? -1 : inner[j];
        // Runs of consecutive sources (the unpadded middle) in one copy.
        int64_t run = 1;
        while (index >= 0 && j + run < length &&
               inner[j + run] == index + run) {
          ++run;
        }
        if (index >= 0) {
          std::memcpy(out_row + j * element, src + (base + index) * element,
                      static_cast<size_t>(run) * element);
        } else if (fill != nullptr) {
          std::memcpy(out_row + j * element, fill->data(), element);
        }  // else: the output is zero-filled already
        j += run - 1;
      }
    }
  });
  return Status::ok();
}

// --- Tile --------------------------------------------------------------------

Status run_tile(KernelContext& ctx) {
  const Tensor& in = *ctx.input(0);
  SEQRT_ASSIGN_OR_RETURN(std::vector<int64_t> dims, inferred_dims(ctx));
  SEQRT_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocate_output(0, in.dtype(), dims));
  if (out->num_elements() == 0) return Status::ok();
  const size_t element = dtype_size(in.dtype());
  if (in.rank() == 0) {
    std::memcpy(out->mutable_data(), in.data(), element);
    return Status::ok();
  }
  const std::vector<int64_t> strides = strides_of(in.dims());
  const size_t last = in.rank() - 1;
  const int64_t width = in.dim(last);  // one source row
  const int64_t length = dims.back();
  const auto* src = static_cast<const uint8_t*>(in.data());
  auto* dst = static_cast<uint8_t*>(out->mutable_data());
  parallel_chunks(num_rows(dims), row_grain(dims), [&](int64_t b, int64_t e) {
    std::vector<int64_t> coords(dims.size(), 0);
    for (int64_t row = b; row < e; ++row) {
      row_coords(dims, row, coords);
      int64_t base = 0;
      for (size_t d = 0; d < last; ++d) {
        base += (coords[d] % in.dim(d)) * strides[d];
      }
      uint8_t* out_row = dst + static_cast<size_t>(row * length) * element;
      for (int64_t j = 0; j < length; j += width) {
        std::memcpy(out_row + j * element, src + base * element,
                    static_cast<size_t>(width) * element);
      }
    }
  });
  return Status::ok();
}

// --- Trilu -------------------------------------------------------------------

Status run_trilu(KernelContext& ctx) {
  const Tensor& in = *ctx.input(0);
  if (in.rank() < 2) {
    return ctx.error("input must have rank >= 2, got shape {}",
                     dims_to_string(in.dims()));
  }
  int64_t k = 0;
  if (ctx.has_input(1)) {
    SEQRT_ASSIGN_OR_RETURN(k, read_int_scalar(ctx, *ctx.input(1), "k"));
  }
  const bool upper = ctx.attr_int("upper") != 0;
  SEQRT_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocate_output(0, in.dtype(), in.dims()));
  const int64_t rows = in.dim(in.rank() - 2);
  const int64_t cols = in.dim(in.rank() - 1);
  if (out->num_elements() == 0) return Status::ok();
  const size_t element = dtype_size(in.dtype());
  const auto* src = static_cast<const uint8_t*>(in.data());
  auto* dst = static_cast<uint8_t*>(out->mutable_data());
  // k may be any int64: clamp the kept columns [lo, hi) of row i to [0, cols].
  auto clamp = [cols](int64_t v) {
    return std::min(std::max<int64_t>(v, 0), cols);
  };
  parallel_chunks(in.num_elements() / cols, std::max<int64_t>(1, kGrain / cols),
                  [&](int64_t b, int64_t e) {
                    for (int64_t r = b; r < e; ++r) {
                      int64_t i = r % rows;
                      int64_t diag = k > cols ? cols : (k < -rows ? -rows : k);
                      int64_t lo = upper ? clamp(i + diag) : 0;
                      int64_t hi = upper ? cols : clamp(i + diag + 1);
                      if (lo >= hi) continue;
                      size_t offset =
                          static_cast<size_t>(r * cols + lo) * element;
                      std::memcpy(dst + offset, src + offset,
                                  static_cast<size_t>(hi - lo) * element);
                    }
                  });
  return Status::ok();
}

}  // namespace

void register_gather_pad_kernels(KernelTable& table) {
  table.add(
      CpuKernel{kOnnxDomain, "GatherElements", run_gather_elements, nullptr});
  table.add(CpuKernel{kOnnxDomain, "Pad", run_pad, nullptr});
  table.add(CpuKernel{kOnnxDomain, "Tile", run_tile, nullptr});
  table.add(CpuKernel{kOnnxDomain, "Trilu", run_trilu, nullptr});
}

}  // namespace seqrt::cpu
