// Pieces shared by the sequence-op shaders (seq_*.comp): the activation
// functions of OPS.md in fp32, written once so every kernel agrees with
// the reference kernels' definitions.
#ifndef SEQRT_SEQUENCE_COMMON_GLSL
#define SEQRT_SEQUENCE_COMMON_GLSL

// Mamba's softplus: log1p(exp(x)) up to 20, x itself beyond. log(1 + e^x)
// loses nothing that matters in fp32 for x > -20 and is exactly 0 below.
float seq_softplus(float x) {
  if (x > 20.0) return x;
  if (x < -20.0) return exp(x);
  return log(1.0 + exp(x));
}

float seq_sigmoid(float x) {
  // Split by sign so exp never overflows.
  if (x >= 0.0) return 1.0 / (1.0 + exp(-x));
  float e = exp(x);
  return e / (1.0 + e);
}

float seq_silu(float x) { return x * seq_sigmoid(x); }

// Bits of the `flags` push constant the sequence kernels share.
const uint SEQ_HAS_PAST = 1u;     // past_state given (else zeros)
const uint SEQ_HAS_PRESENT = 2u;  // present_state requested
const uint SEQ_HAS_SKIP = 4u;     // D skip input
const uint SEQ_HAS_Z = 8u;        // z gate input
const uint SEQ_HAS_BIAS = 16u;    // delta / dt bias input
const uint SEQ_SOFTPLUS = 32u;    // softplus on the step size

bool seq_flag(uint flags, uint bit) { return (flags & bit) != 0u; }

#endif
