// Device kernels of the shape ops whose index maps are not strided copies
// (shape_plan.h): Pad in every mode, GatherElements, Range. Data moves as
// bits of 1, 2, 4 or 8 bytes; Range computes in its dtype.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "backends/cuda/shape_plan.h"
#include "graph/dtype.h"

namespace seqrt::cuda {

// out = data padded by `index`; `constant` is one element (null: zeros).
cudaError_t launch_pad(const void* data, const void* constant, void* out,
                       size_t element_size, const PadIndex& index,
                       int64_t elements, cudaStream_t stream);

cudaError_t launch_gather_elements(const void* data, const int64_t* indices,
                                   void* out, size_t element_size,
                                   const GatherElementsIndex& index,
                                   int64_t elements, cudaStream_t stream);

// out[i] = start + i·delta in `dtype` (f32, f64, i32, i64): integers
// exactly, floats as start + i·delta in double rounded once, as the
// reference does.
cudaError_t launch_range(DType dtype, double start, double delta,
                         int64_t start_int, int64_t delta_int, void* out,
                         int64_t n, cudaStream_t stream);

}  // namespace seqrt::cuda
