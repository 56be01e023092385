// Chunked SSD (Mamba-2), pass 1 of 3: each chunk's own contribution to the
// P×N state, U_c = Σ_{s in c} e^{Σ_{s<r<=end} Δ_r A} Δ_s x_s ⊗ Bm_s, one
// invocation per state element of one (chunk, batch·head), by Horner's rule
// (the decays multiply, no exponent is formed from a difference); and the
// chunk's whole decay e^{Σ Δ A}. Chunks run in parallel.
#version 450
#include "sequence_common.glsl"

layout(local_size_x = 64) in;

layout(push_constant) uniform Params {
  uint batch, seq_len, heads, head_dim, states, groups, flags;
  float dt_min, dt_max;
  uint chunk, chunks;
} pc;

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer Dt { float dt_in[]; };
layout(std430, binding = 2) readonly buffer AVec { float a_vec[]; };
layout(std430, binding = 3) readonly buffer BMat { float b_mat[]; };
layout(std430, binding = 4) readonly buffer Bias { float dt_bias[]; };
layout(std430, binding = 5) writeonly buffer States { float states[]; };
layout(std430, binding = 6) writeonly buffer Decays { float chunk_decay[]; };

void main() {
  const uint e = gl_GlobalInvocationID.x;
  const uint size = pc.head_dim * pc.states;
  if (e >= size) return;
  const uint p = e / pc.states, n = e % pc.states;
  const uint c = gl_WorkGroupID.y, bh = gl_WorkGroupID.z;
  const uint b = bh / pc.heads, head = bh % pc.heads;
  const uint g = head / (pc.heads / pc.groups);
  const float a = a_vec[head];
  const float bias = seq_flag(pc.flags, SEQ_HAS_BIAS) ? dt_bias[head] : 0.0;
  const uint begin = c * pc.chunk;
  const uint end = min(begin + pc.chunk, pc.seq_len);
  float acc = 0.0;
  float total = 0.0;  // Σ Δ A over the chunk
  for (uint s = begin; s < end; ++s) {
    const uint token = b * pc.seq_len + s;
    const float dt = seq_ssd_step(dt_in[token * pc.heads + head], bias,
                                  seq_flag(pc.flags, SEQ_SOFTPLUS), pc.dt_min,
                                  pc.dt_max);
    total += dt * a;
    const float bn = b_mat[(token * pc.groups + g) * pc.states + n];
    acc = exp(dt * a) * acc + dt * x[(token * pc.heads + head) * pc.head_dim + p] * bn;
  }
  states[(bh * pc.chunks + c) * size + e] = acc;
  if (e == 0) chunk_decay[bh * pc.chunks + c] = exp(total);
}
