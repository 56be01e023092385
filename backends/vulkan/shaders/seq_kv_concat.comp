// present_key / present_value of Attention: concat(past, new) on the time
// axis, (B,Hkv,Ttot,w), reading the new keys through their layout
// ((B,Hkv,Tk,w), or ONNX's packed (B,Tk,Hkv*w)). Grid-stride loop, so any
// cache size fits a bounded grid.
#version 450
#include "sequence_common.glsl"

layout(local_size_x = 256) in;

layout(push_constant) uniform Params {
  uint batch, heads, past_len, new_len, width, flags;
} pc;

layout(std430, binding = 0) readonly buffer Past { float past[]; };
layout(std430, binding = 1) readonly buffer Fresh { float fresh[]; };
layout(std430, binding = 2) writeonly buffer Present { float present[]; };

void main() {
  const uint total = pc.past_len + pc.new_len;
  const uint count = pc.batch * pc.heads * total * pc.width;
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint e = gl_GlobalInvocationID.x; e < count; e += step) {
    const uint c = e % pc.width;
    const uint t = (e / pc.width) % total;
    const uint bh = e / (pc.width * total);
    if (t < pc.past_len) {
      present[e] = past[(bh * pc.past_len + t) * pc.width + c];
      continue;
    }
    const uint b = bh / pc.heads, h = bh % pc.heads, tn = t - pc.past_len;
    const uint at = seq_flag(pc.flags, ATTN_PACKED)
        ? ((b * pc.new_len + tn) * pc.heads + h) * pc.width + c
        : (bh * pc.new_len + tn) * pc.width + c;
    present[e] = fresh[at];
  }
}
