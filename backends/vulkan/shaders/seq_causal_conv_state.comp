// CausalConvWithState's present_state: the last k-1 positions of
// [past_state, input]. One workgroup per channel row reads them all into
// shared memory before any is written, so present_state may be the same
// buffer as past_state (a Stream updating its state in place).
#version 450
#include "sequence_common.glsl"

#include "group_size.glsl"
layout(constant_id = 1) const uint KM1 = 3;  // k - 1 (>= 1)

layout(push_constant) uniform Params {
  uint batch, channels, seq_len, flags;
} pc;

layout(std430, binding = 0) readonly buffer In { float x[]; };
layout(std430, binding = 1) readonly buffer Past { float past_state[]; };
layout(std430, binding = 2) writeonly buffer Present { float present[]; };

shared float saved[KM1];

void main() {
  const uint c = gl_WorkGroupID.x;
  const uint b = gl_WorkGroupID.y;
  const uint row = (b * pc.channels + c) * pc.seq_len;
  const uint state_row = (b * pc.channels + c) * KM1;
  const bool has_past = seq_flag(pc.flags, SEQ_HAS_PAST);
  for (uint j = gl_LocalInvocationIndex; j < KM1; j += GROUP_SIZE) {
    // Position j of the state is position seq_len + j of [past, input].
    const uint p = pc.seq_len + j;
    float v = 0.0;
    if (p >= KM1) {
      v = x[row + p - KM1];
    } else if (has_past) {
      v = past_state[state_row + p];
    }
    saved[j] = v;
  }
  barrier();
  for (uint j = gl_LocalInvocationIndex; j < KM1; j += GROUP_SIZE) {
    present[state_row + j] = saved[j];
  }
}
