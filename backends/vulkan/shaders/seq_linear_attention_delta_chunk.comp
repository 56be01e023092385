// ONNX LinearAttention, the delta rules (delta, gated_delta with one decay
// per head) in chunks: the same results as the recurrent form
// (seq_linear_attention.comp) with a chunk's work as matrix products, one
// dispatch per PHASE over (elements / wg, batch·kv heads). With a_t = e^{g_t},
// S_t = a_t S_{t−1} + k_t δ_tᵀ and δ_t = β_t (v_t − a_t S_{t−1}ᵀ k_t), inside
// a chunk of L tokens starting from S0, with c_t the cumulative log decay:
//   δ_t = β_t (v_t − e^{c_t} S0ᵀk_t) − Σ_{s<t} β_t e^{c_t−c_s} (k_t·k_s) δ_s
// (a unit lower-triangular system, solved by forward substitution, one
// value column per invocation), then
//   o_t = scale (e^{c_t} S0ᵀ q_t + Σ_{s≤t} e^{c_t−c_s} (q_t·k_s) δ_s)
//   S_L = e^{c_{L−1}} S0 + Σ_s e^{c_{L−1}−c_s} k_s δ_sᵀ
// (CPU: delta_values in backends/cpu/kernels/chunked_state.cc). The chunks
// follow each other; the state lives in `state` (present_state, or scratch).
// `scratch` per (batch, kv head): U (L×dv: the right side, then δ in
// place), KK (L×L: β_t e^{c_t−c_s} k_t·k_s below the diagonal), C (L), QK
// (G×L×L: e^{c_t−c_s} q_t·k_s on and below the diagonal, per query head).
#version 450
#include "sequence_common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint PHASE = 0;

const uint PH_INIT = 0u;    // state from past_state, or zeros
const uint PH_SYSTEM = 1u;  // U, KK, C and QK of the chunk
const uint PH_SOLVE = 2u;   // δ by forward substitution
const uint PH_OUTPUT = 3u;  // o for every query head of the group
const uint PH_STATE = 4u;   // the state after the chunk

// Flag bits (sequence_linear_attention.h), as seq_linear_attention.comp.
const uint LA_DECAY = 1u, LA_BETA_PER_HEAD = 8u, LA_HAS_PAST = 16u;

layout(push_constant) uniform Params {
  uint batch, seq_len, q_heads, kv_heads, dk, dv, flags;
  float scale;
  uint chunk, round;
} pc;

layout(std430, binding = 0) readonly buffer Q { float q[]; };
layout(std430, binding = 1) readonly buffer K { float k[]; };
layout(std430, binding = 2) readonly buffer V { float v[]; };
layout(std430, binding = 3) readonly buffer Past { float past_state[]; };
layout(std430, binding = 4) readonly buffer Decay { float decay[]; };
layout(std430, binding = 5) readonly buffer Beta { float beta[]; };
layout(std430, binding = 6) writeonly buffer Out { float o[]; };
layout(std430, binding = 7) buffer State { float state[]; };
layout(std430, binding = 8) buffer Scratch { float scratch[]; };

uint k_at(uint b, uint t, uint g, uint i) {
  return (b * pc.seq_len + t) * pc.kv_heads * pc.dk + g * pc.dk + i;
}

float log_decay(uint b, uint t, uint g) {
  return seq_flag(pc.flags, LA_DECAY) ? decay[(b * pc.seq_len + t) * pc.kv_heads + g]
                                      : 0.0;
}

float beta_at(uint b, uint t, uint g) {
  const bool per_head = seq_flag(pc.flags, LA_BETA_PER_HEAD);
  const uint width = per_head ? pc.kv_heads : 1u;
  return beta[(b * pc.seq_len + t) * width + (per_head ? g : 0u)];
}

void main() {
  const uint bg = gl_WorkGroupID.y;
  const uint b = bg / pc.kv_heads, g = bg % pc.kv_heads;
  const uint e = gl_GlobalInvocationID.x;
  const uint dk = pc.dk, dv = pc.dv;
  const uint s_base = bg * dk * dv;
  if (PHASE == PH_INIT) {
    if (e < dk * dv) {
      state[s_base + e] =
          seq_flag(pc.flags, LA_HAS_PAST) ? past_state[s_base + e] : 0.0;
    }
    return;
  }
  const uint L = pc.chunk;
  const uint t0 = pc.round * L;
  if (t0 >= pc.seq_len) return;
  const uint n = min(L, pc.seq_len - t0);  // tokens in this chunk
  const uint group = pc.q_heads / pc.kv_heads;
  // As scratch_floats in kernels/sequence_linear_attention_delta.cc.
  const uint u_base = bg * (L * dv + L * L + L + group * L * L);
  const uint kk_base = u_base + L * dv;
  const uint c_base = kk_base + L * L;
  const uint qk_base = c_base + L;

  if (PHASE == PH_SYSTEM) {
    // C: each element's own prefix sum (n ≤ 64 terms).
    if (e < n) {
      float c = 0.0;
      for (uint s = 0u; s <= e; ++s) c += log_decay(b, t0 + s, g);
      scratch[c_base + e] = c;
    }
    if (e < n * dv) {
      const uint t = e / dv, j = e % dv;
      float c = 0.0;
      for (uint s = 0u; s <= t; ++s) c += log_decay(b, t0 + s, g);
      float ks = 0.0;
      for (uint i = 0u; i < dk; ++i) ks += k[k_at(b, t0 + t, g, i)] * state[s_base + i * dv + j];
      const float vt = v[(b * pc.seq_len + t0 + t) * pc.kv_heads * dv + g * dv + j];
      scratch[u_base + t * dv + j] = beta_at(b, t0 + t, g) * (vt - exp(c) * ks);
    }
    if (e < group * n * n) {
      const uint h = e / (n * n), t = (e / n) % n, s = e % n;
      if (s > t) return;
      float gap = 0.0;  // c_t − c_s
      for (uint r = s + 1u; r <= t; ++r) gap += log_decay(b, t0 + r, g);
      const uint q_row =
          (b * pc.seq_len + t0 + t) * pc.q_heads * dk + (g * group + h) * dk;
      float qk = 0.0, kk = 0.0;
      for (uint i = 0u; i < dk; ++i) {
        const float ks = k[k_at(b, t0 + s, g, i)];
        qk += q[q_row + i] * ks;
        kk += k[k_at(b, t0 + t, g, i)] * ks;
      }
      scratch[qk_base + (h * L + t) * L + s] = exp(gap) * qk;
      if (h == 0u && s < t) {
        scratch[kk_base + t * L + s] = beta_at(b, t0 + t, g) * exp(gap) * kk;
      }
    }
  } else if (PHASE == PH_SOLVE) {
    if (e >= dv) return;
    for (uint t = 1u; t < n; ++t) {
      float sum = scratch[u_base + t * dv + e];
      for (uint s = 0u; s < t; ++s) {
        sum -= scratch[kk_base + t * L + s] * scratch[u_base + s * dv + e];
      }
      scratch[u_base + t * dv + e] = sum;
    }
  } else if (PHASE == PH_OUTPUT) {
    if (e >= n * group * dv) return;
    const uint j = e % dv, h = (e / dv) % group, t = e / (dv * group);
    const uint q_row = (b * pc.seq_len + t0 + t) * pc.q_heads * dk + (g * group + h) * dk;
    const float ct = scratch[c_base + t];
    float from_state = 0.0;
    for (uint i = 0u; i < dk; ++i) from_state += q[q_row + i] * state[s_base + i * dv + j];
    float sum = exp(ct) * from_state;
    for (uint s = 0u; s <= t; ++s) {
      sum += scratch[qk_base + (h * L + t) * L + s] * scratch[u_base + s * dv + j];
    }
    o[(b * pc.seq_len + t0 + t) * pc.q_heads * dv + (g * group + h) * dv + j] =
        pc.scale * sum;
  } else if (PHASE == PH_STATE) {
    if (e >= dk * dv) return;
    const uint i = e / dv, j = e % dv;
    const float last = scratch[c_base + n - 1u];
    float sum = exp(last) * state[s_base + e];
    for (uint s = 0u; s < n; ++s) {
      sum += exp(last - scratch[c_base + s]) * k[k_at(b, t0 + s, g, i)] *
             scratch[u_base + s * dv + j];
    }
    state[s_base + e] = sum;
  }
}
