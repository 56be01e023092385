// Kernels that read or write other dtypes than f32: Cast (every seqrt
// dtype to every other, with the reference's rules: floats through double,
// saturating into integers with NaN as 0; integers and bools exactly
// through int64), the comparisons, whose output is bool, and IsNaN/IsInf.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "backends/cuda/kernels/elementwise.h"
#include "graph/dtype.h"

namespace seqrt::cuda {

cudaError_t launch_cast(const void* x, DType from, void* y, DType to, int64_t n,
                        cudaStream_t stream);

enum class CompareOp { kEqual, kLess, kGreater, kLessOrEqual, kGreaterOrEqual };

// out (bool, one byte each) = a op b with ONNX broadcasting; a and b share
// `dtype`, compared as double for floats and exactly as int64 otherwise.
cudaError_t launch_compare(CompareOp op, const void* a, const void* b,
                           DType dtype, uint8_t* out,
                           const BroadcastIndex& index, int64_t n,
                           cudaStream_t stream);

// out (bool) = whether x (f32, f64, f16 or bf16) is NaN (`nan`) or else an
// infinity of a detected sign, read from the bits of each dtype.
struct FloatClassQuery {
  bool nan = true;
  bool negative = true;
  bool positive = true;
};
cudaError_t launch_float_class(FloatClassQuery query, const void* x,
                               DType dtype, uint8_t* out, int64_t n,
                               cudaStream_t stream);

}  // namespace seqrt::cuda
