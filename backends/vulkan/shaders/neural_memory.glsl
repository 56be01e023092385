// Pieces both NeuralMemory shaders share (seq_neural_memory.comp, the token
// loop; seq_neural_memory_chunk.comp, the chunk-parallel form): the flag
// bits of the push constants, the memory MLP's activation and its
// derivative, and `position` modulo chunk_size without 64-bit integers.
#ifndef SEQRT_NEURAL_MEMORY_GLSL
#define SEQRT_NEURAL_MEMORY_GLSL

#include "sequence_common.glsl"

// As kGelu... in kernels/sequence_neural_memory.h.
const uint NM_GELU = 1u, NM_BEFORE = 2u, NM_HAS_PAST = 4u, NM_INIT = 8u,
           NM_HAS_POSITION = 16u;

// GELU (exact, through seq_erf) or SiLU.
float nm_act(float x, uint flags) {
  if (seq_flag(flags, NM_GELU)) return 0.5 * x * (1.0 + seq_erf(x * 0.70710678));
  return x * seq_sigmoid(x);
}

float nm_act_derivative(float x, uint flags) {
  if (seq_flag(flags, NM_GELU)) {
    const float cdf = 0.5 * (1.0 + seq_erf(x * 0.70710678));
    return cdf + x * 0.39894228 * exp(-0.5 * x * x);
  }
  const float s = seq_sigmoid(x);
  return s * (1.0 + x * (1.0 - s));
}

// (hi·2^32 + lo) mod chunk, a bit at a time: r < chunk < 2^31 keeps r·2 in
// 32 bits without shaderInt64.
uint nm_wide_mod(uint lo, uint hi, uint chunk) {
  if (hi == 0u) return lo % chunk;
  uint r = 0u;
  for (int bit = 63; bit >= 0; --bit) {
    const uint word = bit >= 32 ? hi : lo;
    r = (r << 1) | ((word >> uint(bit & 31)) & 1u);
    if (r >= chunk) r -= chunk;
  }
  return r;
}

#endif
