// Chunked LinearAttention (rules linear and gated), pass 1 of 3: each
// chunk's own contribution to the dk×dv state of one (batch, kv head),
// U_c[i][j] = Σ_{s in c} (Π_{s<r<=end} f_r[i]) k_s[i] v_s[j] with f = e^{g}
// (per key row or per head; 1 for linear), by Horner's rule; and the
// chunk's whole decay per row, Π f[i]. One invocation per state element;
// chunks run in parallel.
#version 450
#include "sequence_common.glsl"

layout(local_size_x = 64) in;

layout(push_constant) uniform Params {
  uint batch, seq_len, q_heads, kv_heads, dk, dv, flags;
  float scale;
  uint chunk, chunks;
} pc;

const uint LA_DECAY = 1u, LA_DECAY_PER_KEY = 2u;

layout(std430, binding = 0) readonly buffer K { float k[]; };
layout(std430, binding = 1) readonly buffer V { float v[]; };
layout(std430, binding = 2) readonly buffer Decay { float decay[]; };
layout(std430, binding = 3) writeonly buffer States { float states[]; };
layout(std430, binding = 4) writeonly buffer Decays { float chunk_decay[]; };

void main() {
  const uint e = gl_GlobalInvocationID.x;
  const uint size = pc.dk * pc.dv;
  if (e >= size) return;
  const uint i = e / pc.dv, j = e % pc.dv;
  const uint c = gl_WorkGroupID.y, bg = gl_WorkGroupID.z;
  const uint b = bg / pc.kv_heads, g = bg % pc.kv_heads;
  const bool gated = seq_flag(pc.flags, LA_DECAY);
  const bool per_key = seq_flag(pc.flags, LA_DECAY_PER_KEY);
  const uint width = per_key ? pc.kv_heads * pc.dk : pc.kv_heads;
  const uint begin = c * pc.chunk;
  const uint end = min(begin + pc.chunk, pc.seq_len);
  float acc = 0.0;
  float total = 0.0;  // Σ g over the chunk (log of the row's decay)
  for (uint s = begin; s < end; ++s) {
    const uint row = b * pc.seq_len + s;
    float log_f = 0.0;
    if (gated) {
      log_f = per_key ? decay[row * width + g * pc.dk + i] : decay[row * width + g];
    }
    total += log_f;
    acc = exp(log_f) * acc + k[row * pc.kv_heads * pc.dk + g * pc.dk + i] *
                                 v[row * pc.kv_heads * pc.dv + g * pc.dv + j];
  }
  states[(bg * pc.chunks + c) * size + e] = acc;
  if (j == 0) chunk_decay[(bg * pc.chunks + c) * pc.dk + i] = exp(total);
}
