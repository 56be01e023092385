// The reduce pass of split-K attention (seq_attention with SPLIT): row
// (b, h, i) of Y from its splits' unnormalised accumulators, maxima and
// sums. softmax: Y = Σ_s acc_s e^(m_s − M) / Σ_s l_s e^(m_s − M) with M the
// largest m_s; sigmoid: Y = Σ_s acc_s. One invocation per output value.
#version 450
#include "sequence_common.glsl"

layout(local_size_x = 64) in;

layout(push_constant) uniform Params {
  uint batch, q_heads, q_len, value_dim, splits, flags;
} pc;

layout(std430, binding = 0) readonly buffer Partial { float partial[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };

void main() {
  const uint dv = pc.value_dim;
  const uint idx = gl_GlobalInvocationID.x;
  if (idx >= pc.batch * pc.q_heads * pc.q_len * dv) return;
  const uint global_row = idx / dv;
  const uint c = idx % dv;
  const uint first = global_row * pc.splits * (dv + 2);
  float value = 0.0;
  if (seq_flag(pc.flags, ATTN_SIGMOID)) {
    for (uint s = 0; s < pc.splits; ++s) value += partial[first + s * (dv + 2) + c];
  } else {
    float top = SEQ_NEG_INF;
    for (uint s = 0; s < pc.splits; ++s) {
      top = max(top, partial[first + s * (dv + 2) + dv]);
    }
    if (top != SEQ_NEG_INF) {  // else no split saw a key: the row is 0
      float sum = 0.0;
      for (uint s = 0; s < pc.splits; ++s) {
        const uint at = first + s * (dv + 2);
        const float m = partial[at + dv];
        if (m == SEQ_NEG_INF) continue;
        const float w = exp(m - top);
        sum += w * partial[at + dv + 1];
        value += w * partial[at + c];
      }
      value /= sum;
    }
  }
  const uint b = global_row / (pc.q_heads * pc.q_len);
  const uint h = (global_row / pc.q_len) % pc.q_heads;
  const uint i = global_row % pc.q_len;
  const uint at = seq_flag(pc.flags, ATTN_PACKED)
      ? ((b * pc.q_len + i) * pc.q_heads + h) * dv + c
      : global_row * dv + c;
  y[at] = value;
}
