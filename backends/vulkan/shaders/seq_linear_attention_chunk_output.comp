// Chunked LinearAttention, pass 3 of 3: the outputs of one chunk of one
// (batch, kv head) for each query head of its group, all chunks in
// parallel. With cs_t[i] = Σ_{begin<=r<=t} g_r[i] (0 for linear):
//   o_t[j] = scale (Σ_{s<=t} Σ_i q_t[i] k_s[i] e^{cs_t[i] − cs_s[i]} v_s[j]
//                   + Σ_i q_t[i] e^{cs_t[i]} R[i][j])
// with R the state at the chunk's start (pass 2). The scores are built in
// shared memory for s <= t only, one query head at a time.
#version 450
#include "sequence_common.glsl"

#include "group_size.glsl"
layout(constant_id = 1) const uint C = 64;   // chunk length
layout(constant_id = 2) const uint DK = 16;  // d_k (the cumsum rows)

layout(push_constant) uniform Params {
  uint batch, seq_len, q_heads, kv_heads, dk, dv, flags;
  float scale;
  uint chunk, chunks;
} pc;

const uint LA_DECAY = 1u, LA_DECAY_PER_KEY = 2u;

layout(std430, binding = 0) readonly buffer Q { float q[]; };
layout(std430, binding = 1) readonly buffer K { float k[]; };
layout(std430, binding = 2) readonly buffer V { float v[]; };
layout(std430, binding = 3) readonly buffer Decay { float decay[]; };
layout(std430, binding = 4) readonly buffer States { float states[]; };
layout(std430, binding = 5) writeonly buffer Out { float o[]; };

shared float scores[C * C];
shared float cumsum[C * DK];  // cs_t[i] at t * DK + i

void main() {
  const uint c = gl_WorkGroupID.x, bg = gl_WorkGroupID.y;
  const uint wg = GROUP_SIZE;
  const uint b = bg / pc.kv_heads, g = bg % pc.kv_heads;
  const uint group = pc.q_heads / pc.kv_heads;
  const uint dk = pc.dk, dv = pc.dv;
  const uint begin = c * C;
  const uint len = min(C, pc.seq_len - begin);
  const uint first = b * pc.seq_len + begin;
  const bool gated = seq_flag(pc.flags, LA_DECAY);
  const bool per_key = seq_flag(pc.flags, LA_DECAY_PER_KEY);
  const uint width = per_key ? pc.kv_heads * dk : pc.kv_heads;
  // Each row i's running sum over the chunk, one invocation per row.
  for (uint i = gl_LocalInvocationIndex; i < dk; i += wg) {
    float run = 0.0;
    for (uint t = 0; t < len; ++t) {
      if (gated) {
        const uint row = first + t;
        run += per_key ? decay[row * width + g * dk + i] : decay[row * width + g];
      }
      cumsum[t * DK + i] = run;
    }
  }
  const uint state = (bg * pc.chunks + c) * dk * dv;
  for (uint h = g * group; h < (g + 1) * group; ++h) {
    barrier();  // cumsum ready; the previous head's readers are done
    for (uint idx = gl_LocalInvocationIndex; idx < C * C; idx += wg) {
      const uint t = idx / C, s = idx % C;
      float value = 0.0;
      if (t < len && s <= t) {
        for (uint i = 0; i < dk; ++i) {
          value += q[(first + t) * pc.q_heads * dk + h * dk + i] *
                   k[(first + s) * pc.kv_heads * dk + g * dk + i] *
                   exp(cumsum[t * DK + i] - cumsum[s * DK + i]);
        }
      }
      scores[idx] = value;
    }
    barrier();
    for (uint idx = gl_LocalInvocationIndex; idx < len * dv; idx += wg) {
      const uint t = idx / dv, j = idx % dv;
      float inner = 0.0;
      for (uint s = 0; s <= t; ++s) {
        inner += scores[t * C + s] * v[(first + s) * pc.kv_heads * dv + g * dv + j];
      }
      float cross = 0.0;
      for (uint i = 0; i < dk; ++i) {
        cross += q[(first + t) * pc.q_heads * dk + h * dk + i] *
                 exp(cumsum[t * DK + i]) * states[state + i * dv + j];
      }
      o[(first + t) * pc.q_heads * dv + h * dv + j] = pc.scale * (inner + cross);
    }
  }
}
