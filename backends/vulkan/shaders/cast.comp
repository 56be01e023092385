#version 450
// Cast between f32, i32, i64 (low and high words), bool (bytes) and f16
// (halves, read and written in 32-bit words, so no 16-bit storage is
// needed). Each invocation makes one element, or the 4 bools or 2 halves of
// one word so that no two invocations write the same word. Codes for FROM
// and TO: 0 f32, 1 i32, 2 i64, 3 bool, 4 f16. Float to integer truncates
// toward zero; float to f16 rounds to nearest even.
#include "common.glsl"
#include "flat_index.glsl"
layout(constant_id = 1) const uint FROM = 0;
layout(constant_id = 2) const uint TO = 0;
layout(std430, binding = 0) readonly buffer X { uint x[]; };
layout(std430, binding = 1) writeonly buffer Y { uint y[]; };
layout(push_constant) uniform Push { uint count; } p;

// Element i as a float (for float and bool targets) ...
float as_float(uint i) {
  if (FROM == 0) return uintBitsToFloat(x[i]);
  if (FROM == 1) return float(int(x[i]));
  if (FROM == 2) return i64_to_float(x[2 * i], x[2 * i + 1]);
  if (FROM == 4) return half_bits_to_float(x[i >> 1] >> ((i & 1u) * 16u));
  return float(BOOL_AT(x, i));
}

// ... and as an int64 (low, high) for integer targets.
uvec2 as_i64(uint i) {
  if (FROM == 0 || FROM == 4) return float_to_i64(trunc(as_float(i)));
  if (FROM == 1) return uvec2(x[i], int(x[i]) < 0 ? 0xffffffffu : 0u);
  if (FROM == 2) return uvec2(x[2 * i], x[2 * i + 1]);
  return uvec2(BOOL_AT(x, i), 0u);
}

bool as_bool(uint i) {
  if (FROM == 2) return (x[2 * i] | x[2 * i + 1]) != 0;
  if (FROM == 3) return BOOL_AT(x, i) != 0;
  return as_float(i) != 0.0;
}

void main() {
  uint i = flat_index();
  if (TO == 3) {
    if (i * 4 >= p.count) return;
    uint packed = 0;
    for (uint k = 0; k < 4 && i * 4 + k < p.count; ++k) {
      if (as_bool(i * 4 + k)) packed |= 1u << (8 * k);
    }
    y[i] = packed;
    return;
  }
  if (TO == 4) {
    if (i * 2 >= p.count) return;
    uint low = float_to_half_bits(as_float(i * 2));
    uint high = i * 2 + 1 < p.count ? float_to_half_bits(as_float(i * 2 + 1)) : 0u;
    y[i] = low | (high << 16);
    return;
  }
  if (i >= p.count) return;
  if (TO == 0) {
    y[i] = floatBitsToUint(as_float(i));
  } else if (TO == 1) {
    y[i] = as_i64(i).x;
  } else {
    uvec2 v = as_i64(i);
    y[2 * i] = v.x;
    y[2 * i + 1] = v.y;
  }
}
