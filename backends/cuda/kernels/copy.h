// Data movement on the device for any dtype (elements of 1, 2, 4 or 8
// bytes moved as raw bits): the strided copy behind Transpose, Expand,
// Slice, Concat, Split and the reshaping ops; Gather; Where; Trilu. The
// index plans come from copy_plan.h (host code, tested without a GPU).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "backends/cuda/copy_plan.h"

namespace seqrt::cuda {

// cudaErrorInvalidValue for an element size other than 1, 2, 4 or 8.
cudaError_t launch_strided_copy(const void* src, void* dst, size_t element_size,
                                const StridedCopy& copy, cudaStream_t stream);

// out (outer, indices, inner) = data (outer, axis_length, inner) at
// `indices` (non-negative, checked on the host).
cudaError_t launch_gather(const void* data, const int64_t* indices, void* out,
                          size_t element_size, const GatherShape& shape,
                          cudaStream_t stream);

// out = cond ? x : y with `cond` one byte per element (bool).
cudaError_t launch_where(const uint8_t* cond, const void* x, const void* y,
                         void* out, size_t element_size,
                         const SelectIndex& index, cudaStream_t stream);

// Trilu over (matrices, rows, cols): keeps element (i, j) when j - i >= k
// (upper) or j - i <= k (lower), else zero.
cudaError_t launch_trilu(const void* x, void* out, size_t element_size,
                         int64_t matrices, int64_t rows, int64_t cols,
                         int64_t k, bool upper, cudaStream_t stream);

}  // namespace seqrt::cuda
