// What the GEMM (matmul_body.glsl) and GEMV (gemv_body.glsl) shaders share:
// bindings, push constants (kernels/matmul.cc packs them), the batch
// offsets and the epilogue (alpha, bias, activation). The including shader
// defines WEIGHT_T, the element type of B: float, or float16_t for weights
// stored as fp16 (GL_EXT_shader_16bit_storage).
#ifndef SEQRT_GEMM_COMMON_GLSL
#define SEQRT_GEMM_COMMON_GLSL

#include "activation.glsl"

layout(constant_id = 0) const uint HAS_BIAS = 0;
// seqrt::Linear's activation (activation.glsl).
layout(constant_id = 1) const uint ACT = 0;
layout(std430, binding = 0) readonly buffer A { float a[]; };
layout(std430, binding = 1) readonly buffer B { WEIGHT_T b[]; };
layout(std430, binding = 2) readonly buffer Bias { float c[]; };
layout(std430, binding = 3) writeonly buffer Y { float y[]; };
layout(push_constant) uniform Push {
  uint m, n, k;
  uint a_m, a_k;  // element (i, kk) of A at a_base + i * a_m + kk * a_k
  uint b_k, b_n;  // element (kk, j) of B at b_base + kk * b_k + j * b_n
  uint c_m, c_n;  // bias strides (0 where broadcast)
  float alpha, beta;
  uint batch_rank;
  uint batch_dims[4];
  uint a_batch[4];
  uint b_batch[4];
} p;

// Where batch `z`'s A and B start.
void batch_bases(uint z, out uint a_base, out uint b_base) {
  a_base = 0;
  b_base = 0;
  uint rest = z;
  for (int d = int(p.batch_rank) - 1; d >= 0; --d) {
    uint coord = rest % p.batch_dims[d];
    rest /= p.batch_dims[d];
    a_base += coord * p.a_batch[d];
    b_base += coord * p.b_batch[d];
  }
}

// Output (r, col) of batch z from its dot product.
void store_output(uint z, uint r, uint col, float dot) {
  float v = p.alpha * dot;
  if (HAS_BIAS != 0) v += p.beta * c[r * p.c_m + col * p.c_n];
  y[z * p.m * p.n + r * p.n + col] = linear_activation(v, ACT);
}

#endif
