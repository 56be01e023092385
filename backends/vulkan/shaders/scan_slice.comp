#version 450
// One step's slice of a Scan that runs as a loop (backends/vulkan/scan.cc):
// the step is read from the loop's counter word, so one recorded dispatch
// serves every step. Gather: dst = src's slice `t`; scatter: dst's slice
// `t` = src. `t` is the counter, or steps - 1 - counter for a reversed
// input or output. Slices are whole 32-bit words (4- and 8-byte dtypes).
#include "flat_index.glsl"
layout(std430, binding = 0) readonly buffer Counter { uint step_index; };
layout(std430, binding = 1) readonly buffer Src { uint src[]; };
layout(std430, binding = 2) writeonly buffer Dst { uint dst[]; };
layout(push_constant) uniform Push {
  uint words;    // words per slice
  uint scatter;  // 0: gather a slice of src; 1: scatter into a slice of dst
  uint reverse;
  uint steps;
} p;

void main() {
  uint i = flat_index();
  if (i >= p.words) return;
  uint t = p.reverse != 0u ? p.steps - 1u - step_index : step_index;
  uint base = t * p.words;
  if (p.scatter != 0u) {
    dst[base + i] = src[i];
  } else {
    dst[i] = src[base + i];
  }
}
