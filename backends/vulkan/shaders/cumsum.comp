#version 450
// CumSum along one axis: one invocation per line of the (outer, len, inner)
// view, walking the line in order (or in reverse), so each output is one
// running sum in a register.
#include "common.glsl"
#include "flat_index.glsl"
layout(constant_id = 1) const uint EXCLUSIVE = 0;
layout(constant_id = 2) const uint REVERSE = 0;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };
layout(push_constant) uniform Push {
  uint lines;
  uint len;
  uint inner;
} p;

void main() {
  uint line = flat_index();
  if (line >= p.lines) return;
  uint base = (line / p.inner) * p.len * p.inner + line % p.inner;
  float sum = 0.0;
  for (uint s = 0; s < p.len; ++s) {
    uint j = REVERSE != 0 ? p.len - 1 - s : s;
    uint at = base + j * p.inner;
    float v = x[at];
    if (EXCLUSIVE != 0) {
      y[at] = sum;
      sum += v;
    } else {
      sum += v;
      y[at] = sum;
    }
  }
}
