// Reductions and scans in fp32 with fp64 sums (as the reference kernels):
// ReduceSum/Mean/Max/Min over any set of axes (one warp per output, NaN
// propagating through max/min) and CumSum along one axis.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "backends/cuda/copy_plan.h"

namespace seqrt::cuda {

enum class ReduceOp { kSum, kMean, kMax, kMin };

// `empty_value` is written where nothing is reduced (index.count == 0).
cudaError_t launch_reduce(ReduceOp op, const float* x, float* y,
                          const ReduceIndex& index, float empty_value,
                          cudaStream_t stream);

// x seen as (outer, length, inner); the scan runs along `length`.
cudaError_t launch_cumsum(const float* x, float* y, int64_t outer,
                          int64_t length, int64_t inner, bool exclusive,
                          bool reverse, cudaStream_t stream);

}  // namespace seqrt::cuda
