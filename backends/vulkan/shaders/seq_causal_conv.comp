// CausalConvWithState (ONNX opset 27): out[t] = bias + Σ_i w[i]·x[t-(k-1)+i]
// over [past_state, input], with an optional SiLU. A workgroup owns TILE
// tokens of one channel row and stages them, with the k-1 tokens before
// them, in shared memory so each input is read from device memory once.
#version 450
#include "sequence_common.glsl"

#include "group_size.glsl"
layout(constant_id = 1) const uint TILE = 64;  // tokens per workgroup
layout(constant_id = 2) const uint K = 4;      // kernel size

layout(push_constant) uniform Params {
  uint batch, channels, seq_len, flags, activation;
} pc;

layout(std430, binding = 0) readonly buffer In { float x[]; };
layout(std430, binding = 1) readonly buffer Weight { float w[]; };
layout(std430, binding = 2) readonly buffer Bias { float bias[]; };
layout(std430, binding = 3) readonly buffer Past { float past_state[]; };
layout(std430, binding = 4) writeonly buffer Out { float y[]; };

shared float window[TILE + K - 1];

void main() {
  const uint c = gl_WorkGroupID.y;
  const uint b = gl_WorkGroupID.z;
  const uint t0 = gl_WorkGroupID.x * TILE;
  const uint len = pc.seq_len;
  const uint row = (b * pc.channels + c) * len;
  const uint past_row = (b * pc.channels + c) * (K - 1);
  const bool has_past = seq_flag(pc.flags, SEQ_HAS_PAST);
  for (uint i = gl_LocalInvocationIndex; i < TILE + K - 1; i += GROUP_SIZE) {
    // Position in the input; negative positions read the past state.
    const int p = int(t0 + i) - int(K - 1);
    float v = 0.0;
    if (p >= 0) {
      if (uint(p) < len) v = x[row + uint(p)];
    } else if (has_past) {
      v = past_state[past_row + uint(int(K - 1) + p)];
    }
    window[i] = v;
  }
  barrier();
  const float b0 = seq_flag(pc.flags, SEQ_HAS_BIAS) ? bias[c] : 0.0;
  for (uint j = gl_LocalInvocationIndex; j < TILE; j += GROUP_SIZE) {
    const uint t = t0 + j;
    if (t >= len) break;
    float acc = b0;
    for (uint i = 0; i < K; ++i) acc += w[c * K + i] * window[j + i];
    y[row + t] = pc.activation != 0 ? seq_silu(acc) : acc;
  }
}
