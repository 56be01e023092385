// Row kernels (fp32) over the last axis of a (rows, cols) view: softmax,
// log-softmax, layer normalisation and RMS normalisation. One block per
// row, statistics in fp32 through warp shuffles.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace seqrt::cuda {

cudaError_t launch_softmax_rows(const float* x, float* y, int64_t rows,
                                int64_t cols, bool log_softmax,
                                cudaStream_t stream);
// Row r reads scale/bias at r·affine_stride: 0 when all rows share
// `cols` values, cols when they were expanded to x's shape. bias may be
// null.
cudaError_t launch_layer_norm_rows(const float* x, const float* scale,
                                   const float* bias, float* y, int64_t rows,
                                   int64_t cols, float epsilon,
                                   cudaStream_t stream,
                                   int64_t affine_stride = 0);
cudaError_t launch_rms_norm_rows(const float* x, const float* scale, float* y,
                                 int64_t rows, int64_t cols, float epsilon,
                                 cudaStream_t stream,
                                 int64_t affine_stride = 0);

}  // namespace seqrt::cuda
