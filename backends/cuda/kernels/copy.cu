#include <cstdint>

#include "backends/cuda/kernels/copy.h"

namespace seqrt::cuda {
namespace {

constexpr int kThreads = 256;

int blocks_for(int64_t n) {
  int64_t blocks = (n + kThreads - 1) / kThreads;
  // Grid-stride loops cover the rest.
  return static_cast<int>(blocks < 65535 * 32 ? blocks : 65535 * 32);
}

#define SEQRT_GRID_STRIDE(i, n)                                           \
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; \
       i += int64_t(gridDim.x) * blockDim.x)

// Elements move as unsigned integers of their size: every bit is kept.
template <typename Bits>
__global__ void strided_copy_kernel(const Bits* src, Bits* dst,
                                    StridedCopy copy, int64_t n) {
  SEQRT_GRID_STRIDE(i, n) {
    int64_t s = 0;
    int64_t d = 0;
    copy_offsets(copy, i, &s, &d);
    dst[d] = src[s];
  }
}

template <typename Bits>
__global__ void gather_kernel(const Bits* data, const int64_t* indices,
                              Bits* out, GatherShape shape, int64_t n) {
  SEQRT_GRID_STRIDE(i, n) { out[i] = data[gather_source(shape, indices, i)]; }
}

template <typename Bits>
__global__ void where_kernel(const uint8_t* cond, const Bits* x, const Bits* y,
                             Bits* out, SelectIndex index, int64_t n) {
  SEQRT_GRID_STRIDE(i, n) {
    int64_t at[3];
    select_offsets(index, i, at);
    out[i] = cond[at[0]] != 0 ? x[at[1]] : y[at[2]];
  }
}

template <typename Bits>
__global__ void trilu_kernel(const Bits* x, Bits* out, int64_t rows,
                             int64_t cols, int64_t k, bool upper, int64_t n) {
  SEQRT_GRID_STRIDE(i, n) {
    const int64_t col = i % cols;
    const int64_t row = (i / cols) % rows;
    const int64_t diagonal = col - row;
    const bool keep = upper ? diagonal >= k : diagonal <= k;
    out[i] = keep ? x[i] : Bits(0);
  }
}

// Calls `launch` with the unsigned type of `element_size` bytes.
template <typename Launch>
cudaError_t by_size(size_t element_size, Launch launch) {
  switch (element_size) {
    case 1:
      launch(uint8_t{});
      break;
    case 2:
      launch(uint16_t{});
      break;
    case 4:
      launch(uint32_t{});
      break;
    case 8:
      launch(uint64_t{});
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_strided_copy(const void* src, void* dst, size_t element_size,
                                const StridedCopy& copy, cudaStream_t stream) {
  const int64_t n = copy.elements();
  if (n == 0) return cudaSuccess;
  return by_size(element_size, [&](auto bits) {
    using Bits = decltype(bits);
    strided_copy_kernel<<<blocks_for(n), kThreads, 0, stream>>>(
        static_cast<const Bits*>(src), static_cast<Bits*>(dst), copy, n);
  });
}

cudaError_t launch_gather(const void* data, const int64_t* indices, void* out,
                          size_t element_size, const GatherShape& shape,
                          cudaStream_t stream) {
  const int64_t n = shape.outer * shape.indices * shape.inner;
  if (n == 0) return cudaSuccess;
  return by_size(element_size, [&](auto bits) {
    using Bits = decltype(bits);
    gather_kernel<<<blocks_for(n), kThreads, 0, stream>>>(
        static_cast<const Bits*>(data), indices, static_cast<Bits*>(out), shape,
        n);
  });
}

cudaError_t launch_where(const uint8_t* cond, const void* x, const void* y,
                         void* out, size_t element_size,
                         const SelectIndex& index, cudaStream_t stream) {
  int64_t n = 1;
  for (int a = 0; a < index.rank; ++a) n *= index.dims[a];
  if (n == 0) return cudaSuccess;
  return by_size(element_size, [&](auto bits) {
    using Bits = decltype(bits);
    where_kernel<<<blocks_for(n), kThreads, 0, stream>>>(
        cond, static_cast<const Bits*>(x), static_cast<const Bits*>(y),
        static_cast<Bits*>(out), index, n);
  });
}

cudaError_t launch_trilu(const void* x, void* out, size_t element_size,
                         int64_t matrices, int64_t rows, int64_t cols,
                         int64_t k, bool upper, cudaStream_t stream) {
  const int64_t n = matrices * rows * cols;
  if (n == 0) return cudaSuccess;
  return by_size(element_size, [&](auto bits) {
    using Bits = decltype(bits);
    trilu_kernel<<<blocks_for(n), kThreads, 0, stream>>>(
        static_cast<const Bits*>(x), static_cast<Bits*>(out), rows, cols, k,
        upper, n);
  });
}

}  // namespace seqrt::cuda
