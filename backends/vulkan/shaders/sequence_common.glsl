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

// tanh from exp(-2|x|), which never overflows (a plain (e^2x - 1) /
// (e^2x + 1) gives inf / inf = NaN past |x| ~ 44).
float seq_tanh(float x) {
  const float e = exp(-2.0 * abs(x));
  const float t = (1.0 - e) / (1.0 + e);
  return x < 0.0 ? -t : t;
}

// -inf: a hidden key's logit and the running max before any key.
#define SEQ_NEG_INF uintBitsToFloat(0xff800000u)

// Bits of the `flags` push constant the sequence kernels share.
const uint SEQ_HAS_PAST = 1u;     // past_state given (else zeros)
const uint SEQ_HAS_PRESENT = 2u;  // present_state requested
const uint SEQ_HAS_SKIP = 4u;     // D skip input
const uint SEQ_HAS_Z = 8u;        // z gate input
const uint SEQ_HAS_BIAS = 16u;    // delta / dt bias input
const uint SEQ_SOFTPLUS = 32u;    // softplus on the step size

// γ^n for n >= 0 without pow's undefined 0^0; never a negative power (a
// chunkwise form that formed γ^(−m) would overflow past m ~ 2800).
float seq_decay_pow(float gamma, uint n) {
  if (n == 0u) return 1.0;
  if (gamma <= 0.0) return 0.0;
  return exp(float(n) * log(gamma));
}

// erf to ~1.5e-7 (Abramowitz and Stegun 7.1.26): GLSL has none.
float seq_erf(float x) {
  const float t = 1.0 / (1.0 + 0.3275911 * abs(x));
  const float poly =
      ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) *
           t + 0.254829592) * t;
  const float y = 1.0 - poly * exp(-x * x);
  return x < 0.0 ? -y : y;
}

// SSD's step size: clamp(softplus(dt + bias), lo, hi) (softplus optional).
float seq_ssd_step(float dt, float bias, bool softplus, float lo, float hi) {
  float v = dt + bias;
  if (softplus) v = seq_softplus(v);
  return min(max(v, lo), hi);
}

// Bits of Attention's `flags` (seq_attention*.comp, sequence_attention.cc).
const uint ATTN_CAUSAL = 1u;
const uint ATTN_SIGMOID = 2u;     // sigmoid scores, no normalisation
const uint ATTN_HAS_MASK = 4u;
const uint ATTN_MASK_BOOL = 8u;   // bool mask bytes (else float, added)
const uint ATTN_PACKED = 16u;     // 3D (B,T,H*d) Q/K/V/Y (ONNX)
const uint ATTN_HAS_LENS = 32u;   // valid key count per batch row

bool seq_flag(uint flags, uint bit) { return (flags & bit) != 0u; }

#endif
