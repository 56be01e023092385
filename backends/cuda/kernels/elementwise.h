// Elementwise kernels (fp32): unary maps and binary ops with ONNX
// (numpy) broadcasting. Plain C++ declarations so host code compiled by the
// C++ compiler can call them.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace seqrt::cuda {

enum class UnaryOp {
  kRelu,
  kSigmoid,
  kTanh,
  kExp,
  kLog,
  kNeg,
  kSqrt,
  kAbs,
  kErf
};
enum class BinaryOp { kAdd, kSub, kMul, kDiv, kMax, kMin, kPow };

inline constexpr int kMaxBroadcastRank = 8;

// Output dims and, per operand, the element stride for each output axis
// (0 along broadcast axes), all aligned to the output's rank.
struct BroadcastIndex {
  int rank = 0;
  int64_t dims[kMaxBroadcastRank] = {};
  int64_t a_strides[kMaxBroadcastRank] = {};
  int64_t b_strides[kMaxBroadcastRank] = {};
};

cudaError_t launch_unary(UnaryOp op, const float* x, float* y, int64_t n,
                         cudaStream_t stream);
cudaError_t launch_binary(BinaryOp op, const float* a, const float* b,
                          float* out, const BroadcastIndex& index, int64_t n,
                          cudaStream_t stream);

}  // namespace seqrt::cuda
