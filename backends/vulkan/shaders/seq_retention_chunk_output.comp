// Chunkwise Retention, pass 3 of 3: the outputs of one chunk of one
// (batch, head), all chunks in parallel:
//   y_t = Σ_{s<=t in chunk} γ^(t−s) (q_t·scale·k_s) v_s + γ^(t−begin+1) q_t R
// with R the state at the chunk's start (pass 2). The chunk's decayed score
// matrix is built once in shared memory; only decay differences t − s >= 0
// are formed.
#version 450
#include "sequence_common.glsl"

#include "group_size.glsl"
layout(constant_id = 1) const uint C = 64;  // chunk length

layout(push_constant) uniform Params {
  uint batch_heads, heads, seq_len, dk, dv, chunk, chunks;
  float scale;
} pc;

layout(std430, binding = 0) readonly buffer Q { float q[]; };
layout(std430, binding = 1) readonly buffer K { float k[]; };
layout(std430, binding = 2) readonly buffer V { float v[]; };
layout(std430, binding = 3) readonly buffer Gammas { float gammas[]; };
layout(std430, binding = 4) readonly buffer States { float states[]; };
layout(std430, binding = 5) writeonly buffer Y { float y[]; };

shared float scores[C * C];

void main() {
  const uint c = gl_WorkGroupID.x, bh = gl_WorkGroupID.y;
  const uint wg = GROUP_SIZE;
  const float gamma = gammas[bh % pc.heads];
  const uint begin = c * C;
  const uint len = min(C, pc.seq_len - begin);
  const uint base = bh * pc.seq_len + begin;
  for (uint idx = gl_LocalInvocationIndex; idx < C * C; idx += wg) {
    const uint t = idx / C, s = idx % C;
    float value = 0.0;
    if (t < len && s <= t) {
      float dot = 0.0;
      for (uint i = 0; i < pc.dk; ++i) {
        dot += q[(base + t) * pc.dk + i] * k[(base + s) * pc.dk + i];
      }
      value = seq_decay_pow(gamma, t - s) * pc.scale * dot;
    }
    scores[idx] = value;
  }
  barrier();
  const uint state = (bh * pc.chunks + c) * pc.dk * pc.dv;
  for (uint idx = gl_LocalInvocationIndex; idx < len * pc.dv; idx += wg) {
    const uint t = idx / pc.dv, j = idx % pc.dv;
    float inner = 0.0;
    for (uint s = 0; s <= t; ++s) inner += scores[t * C + s] * v[(base + s) * pc.dv + j];
    float cross = 0.0;
    for (uint i = 0; i < pc.dk; ++i) {
      cross += q[(base + t) * pc.dk + i] * states[state + i * pc.dv + j];
    }
    y[(base + t) * pc.dv + j] = inner + seq_decay_pow(gamma, t + 1) * cross;
  }
}
