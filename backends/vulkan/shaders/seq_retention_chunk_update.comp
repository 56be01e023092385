// Chunkwise Retention, pass 1 of 3 (OPS.md): each chunk's own contribution
// to the state, U_c = Σ_{s in c} γ^(end−1−s) (scale·k_s)ᵀ v_s, one
// invocation per state element (i, j) of one (chunk, batch·head), summed
// by Horner's rule so no power of γ is formed. Chunks run in parallel.
#version 450
#include "sequence_common.glsl"

layout(local_size_x = 64) in;

layout(push_constant) uniform Params {
  uint batch_heads, heads, seq_len, dk, dv, chunk, chunks;
  float scale;
} pc;

layout(std430, binding = 0) readonly buffer K { float k[]; };
layout(std430, binding = 1) readonly buffer V { float v[]; };
layout(std430, binding = 2) readonly buffer Gammas { float gammas[]; };
layout(std430, binding = 3) writeonly buffer States { float states[]; };

void main() {
  const uint e = gl_GlobalInvocationID.x;
  if (e >= pc.dk * pc.dv) return;
  const uint i = e / pc.dv, j = e % pc.dv;
  const uint c = gl_WorkGroupID.y, bh = gl_WorkGroupID.z;
  const float gamma = gammas[bh % pc.heads];
  const uint begin = c * pc.chunk;
  const uint end = min(begin + pc.chunk, pc.seq_len);
  float acc = 0.0;
  for (uint s = begin; s < end; ++s) {
    const uint row = bh * pc.seq_len + s;
    acc = gamma * acc + pc.scale * k[row * pc.dk + i] * v[row * pc.dv + j];
  }
  states[(bh * pc.chunks + c) * pc.dk * pc.dv + e] = acc;
}
