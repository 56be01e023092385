// Chunkwise Retention, pass 2 of 3: the state at each chunk's start,
// R_c = γ^len(c−1) R_{c−1} + U_{c−1} from past_state, written over U_c
// (one store per element per chunk); the state after the last chunk is
// present_state. Every state element is its own short scan over chunks.
#version 450
#include "sequence_common.glsl"

layout(local_size_x = 64) in;

layout(push_constant) uniform Params {
  uint batch_heads, heads, seq_len, dk, dv, chunk, chunks, flags;
} pc;

layout(std430, binding = 0) readonly buffer Past { float past_state[]; };
layout(std430, binding = 1) readonly buffer Gammas { float gammas[]; };
layout(std430, binding = 2) buffer States { float states[]; };
layout(std430, binding = 3) writeonly buffer Present { float present[]; };

void main() {
  const uint e = gl_GlobalInvocationID.x;
  const uint size = pc.dk * pc.dv;
  if (e >= size) return;
  const uint bh = gl_WorkGroupID.y;
  const float gamma = gammas[bh % pc.heads];
  float r = seq_flag(pc.flags, SEQ_HAS_PAST) ? past_state[bh * size + e] : 0.0;
  for (uint c = 0; c < pc.chunks; ++c) {
    const uint at = (bh * pc.chunks + c) * size + e;
    const float own = states[at];
    states[at] = r;
    const uint len = min(pc.chunk, pc.seq_len - c * pc.chunk);
    r = seq_decay_pow(gamma, len) * r + own;
  }
  if (seq_flag(pc.flags, SEQ_HAS_PRESENT)) present[bh * size + e] = r;
}
