#version 450
// out[i] = start + i * delta for Range, and for ConstantOfShape (delta 0).
// TYPE 0 f32, 1 i32, 2 i64 (start as low and high words, delta a 32-bit
// int; the sum carries into the high word).
#include "common.glsl"
#include "flat_index.glsl"
layout(constant_id = 1) const uint TYPE = 0;
layout(std430, binding = 0) writeonly buffer Y { uint y[]; };
layout(push_constant) uniform Push {
  uint count;
  uint start_lo;
  uint start_hi;
  uint delta;
} p;

void main() {
  uint i = flat_index();
  if (i >= p.count) return;
  if (TYPE == 0) {
    float v = uintBitsToFloat(p.start_lo) + float(i) * uintBitsToFloat(p.delta);
    y[i] = floatBitsToUint(v);
  } else if (TYPE == 1) {
    y[i] = uint(int(p.start_lo) + int(i) * int(p.delta));
  } else {
    // (start_hi, start_lo) + i * delta, the product sign-extended.
    int offset = int(i) * int(p.delta);
    uint offset_lo = uint(offset);
    uint offset_hi = offset < 0 ? 0xffffffffu : 0u;
    uint carry;
    uint lo = uaddCarry(p.start_lo, offset_lo, carry);
    y[2 * i] = lo;
    y[2 * i + 1] = p.start_hi + offset_hi + carry;
  }
}
