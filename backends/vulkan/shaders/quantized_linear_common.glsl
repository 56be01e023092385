// What the weight-only quantized Linear shaders (quantized_gemv.comp,
// quantized_gemm.comp) share: bindings, push constants (packed by
// kernels/quantized_linear.cc), reading codes out of W and the epilogue.
//
// W is u8 (N, row_bytes), row n the K codes of output column n (bits 4:
// element k in byte k/2, the low nibble when k is even; bits 8: one code a
// byte). A row need not start on a word, so bytes are picked out of the
// 32-bit words the buffer is read as (no 8-bit storage needed).
// W_real[k, n] = (code - zp[n, k / block]) * scale[n, k / block], with zp
// 2^(bits-1) when there is no W_zero_point. Everything accumulates in fp32.
#ifndef SEQRT_QUANTIZED_LINEAR_COMMON_GLSL
#define SEQRT_QUANTIZED_LINEAR_COMMON_GLSL

#include "activation.glsl"

layout(constant_id = 0) const uint HAS_BIAS = 0;
layout(constant_id = 1) const uint ACT = 0;  // activation.glsl
layout(constant_id = 2) const uint BITS = 4;  // 4 or 8
layout(constant_id = 3) const uint HAS_ZERO_POINT = 0;

layout(std430, binding = 0) readonly buffer X { float x[]; };  // (M, K)
layout(std430, binding = 1) readonly buffer W { uint w[]; };
layout(std430, binding = 2) readonly buffer Bias { float bias[]; };  // (N)
layout(std430, binding = 3) readonly buffer Scale { float scale[]; };
layout(std430, binding = 4) readonly buffer ZeroPoint { uint zp[]; };
layout(std430, binding = 5) writeonly buffer Y { float y[]; };  // (M, N)
layout(push_constant) uniform Push {
  uint m, n, k;
  uint row_bytes;    // bytes of one W row: ceil(K * BITS / 8)
  uint n_blocks;     // ceil(K / block_size)
  uint block_shift;  // log2(block_size)
} p;

// Workgroups are spread over x, y and z past the device's per-dimension
// limit (kernels/quantized_linear.cc); this is the linear index.
uint group_index() {
  return gl_WorkGroupID.x +
         gl_NumWorkGroups.x * (gl_WorkGroupID.y +
                               gl_NumWorkGroups.y * gl_WorkGroupID.z);
}

// Byte `at` of W.
uint w_byte(uint at) { return (w[at >> 2] >> ((at & 3u) * 8u)) & 0xffu; }

// Bytes at..at+3 of W as one word (byte `at` lowest); all four must lie in
// W, so the second word is read only when they straddle it.
uint w_word_at(uint at) {
  uint shift = (at & 3u) * 8u;
  uint low = w[at >> 2];
  return shift == 0u ? low : (low >> shift) | (w[(at >> 2) + 1u] << (32u - shift));
}

// The code of element kk of column col.
uint w_code(uint col, uint kk) {
  if (BITS == 8u) return w_byte(col * p.row_bytes + kk);
  uint byte_value = w_byte(col * p.row_bytes + (kk >> 1));
  return (kk & 1u) == 0u ? byte_value & 15u : byte_value >> 4;
}

// Codes per 32-bit word, and code j (0 first) of such a word.
const uint CODES_PER_WORD = 32u / BITS;
uint word_code(uint word, uint j) {
  return (word >> (j * BITS)) & ((1u << BITS) - 1u);
}

float block_scale(uint col, uint block) {
  return scale[col * p.n_blocks + block];
}

float block_zero_point(uint col, uint block) {
  if (HAS_ZERO_POINT == 0u) return float(1u << (BITS - 1u));
  uint at = col * p.n_blocks + block;
  return float((zp[at >> 2] >> ((at & 3u) * 8u)) & 0xffu);
}

// Output (row, col) from its dot product: bias, then the activation.
void store_output(uint row, uint col, float dot) {
  float v = dot;
  if (HAS_BIAS != 0u) v += bias[col];
  y[row * p.n + col] = linear_activation(v, ACT);
}

#endif
