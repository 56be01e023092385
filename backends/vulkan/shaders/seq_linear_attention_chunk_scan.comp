// Chunked LinearAttention, pass 2 of 3: the state at each chunk's start,
// R_c[i][j] = F_{c−1}[i] R_{c−1}[i][j] + U_{c−1}[i][j] from past_state,
// written over U_c (one store per element per chunk); the state after the
// last chunk is present_state. Every element is its own scan over chunks.
#version 450
#include "sequence_common.glsl"

layout(local_size_x = 64) in;

layout(push_constant) uniform Params {
  uint batch, seq_len, q_heads, kv_heads, dk, dv, flags;
  float scale;
  uint chunk, chunks;
} pc;

const uint LA_HAS_PAST = 16u, LA_HAS_PRESENT = 32u;

layout(std430, binding = 0) readonly buffer Past { float past_state[]; };
layout(std430, binding = 1) readonly buffer Decays { float chunk_decay[]; };
layout(std430, binding = 2) buffer States { float states[]; };
layout(std430, binding = 3) writeonly buffer Present { float present[]; };

void main() {
  const uint e = gl_GlobalInvocationID.x;
  const uint size = pc.dk * pc.dv;
  if (e >= size) return;
  const uint bg = gl_WorkGroupID.y;
  const uint i = e / pc.dv;
  float r = seq_flag(pc.flags, LA_HAS_PAST) ? past_state[bg * size + e] : 0.0;
  for (uint c = 0; c < pc.chunks; ++c) {
    const uint at = (bg * pc.chunks + c) * size + e;
    const float own = states[at];
    states[at] = r;
    r = chunk_decay[(bg * pc.chunks + c) * pc.dk + i] * r + own;
  }
  if (seq_flag(pc.flags, LA_HAS_PRESENT)) present[bg * size + e] = r;
}
