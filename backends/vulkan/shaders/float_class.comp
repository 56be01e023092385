#version 450
// IsNaN (OP 0) and IsInf (OP 1) of f32 into bools, read by their bits so
// no driver's float mode can change the answer (all exponent bits set: an
// infinity when the mantissa is zero, else a NaN). Bools are bytes: each
// invocation makes the 4 bools of one output word.
#include "common.glsl"
#include "flat_index.glsl"
layout(constant_id = 1) const uint OP = 0;
layout(std430, binding = 0) readonly buffer X { uint x[]; };
layout(std430, binding = 1) writeonly buffer Out { uint result[]; };
layout(push_constant) uniform Push {
  uint count;
  uint detect_negative;  // IsInf: which infinities count
  uint detect_positive;
} p;

bool in_class(uint bits) {
  uint magnitude = bits & 0x7fffffffu;
  if (OP == 0) return magnitude > 0x7f800000u;
  bool negative = (bits & 0x80000000u) != 0u;
  return magnitude == 0x7f800000u &&
         (negative ? p.detect_negative != 0u : p.detect_positive != 0u);
}

void main() {
  uint word = flat_index();
  if (word * 4 >= p.count) return;
  uint packed = 0;
  for (uint e = 0; e < 4 && word * 4 + e < p.count; ++e) {
    if (in_class(x[word * 4 + e])) packed |= 1u << (8 * e);
  }
  result[word] = packed;
}
