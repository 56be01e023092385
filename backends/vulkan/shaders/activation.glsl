// seqrt::Linear's fused activation, shared by the float GEMM/GEMV
// (gemm_common.glsl) and the weight-only quantized ones
// (quantized_linear_common.glsl). Codes as kernels/matmul.cc numbers them:
// 0 none, 1 relu, 2 gelu (erf), 3 gelu_tanh, 4 sigmoid, 5 silu.
#ifndef SEQRT_ACTIVATION_GLSL
#define SEQRT_ACTIVATION_GLSL

#include "common.glsl"

float linear_activation(float v, uint act) {
  if (act == 1u) return max(v, 0.0);
  if (act == 2u) return 0.5 * v * (1.0 + erf_approx(v * 0.70710678118));
  if (act == 3u) {
    return 0.5 * v * (1.0 + tanh(0.7978845608 * (v + 0.044715 * v * v * v)));
  }
  if (act == 4u) return 1.0 / (1.0 + exp(-v));
  if (act == 5u) return v / (1.0 + exp(-v));
  return v;
}

#endif
