#version 450
// Where: out[i] = cond ? x : y with numpy broadcasting of all three; cond
// is bytes (bools), x and y are WORDS 32-bit words per element (f32 and
// i32: 1, i64: 2), or with WORDS 0 elements of PART_BYTES within a word
// (bool: 1, f16: 2), of which each invocation makes one whole output word
// so that no two invocations write the same word.
#include "common.glsl"
#include "flat_index.glsl"
layout(constant_id = 1) const uint WORDS = 1;
layout(constant_id = 2) const uint PART_BYTES = 1;
layout(std430, binding = 0) readonly buffer Cond { uint cond[]; };
layout(std430, binding = 1) readonly buffer X { uint x[]; };
layout(std430, binding = 2) readonly buffer Y { uint y[]; };
layout(std430, binding = 3) writeonly buffer Out { uint result[]; };
layout(push_constant) uniform Push {
  uint count;
  uint rank;
  uint dims[MAX_RANK];
  uint c_strides[MAX_RANK];
  uint x_strides[MAX_RANK];
  uint y_strides[MAX_RANK];
} p;

// Where output element i reads cond, x and y.
uvec3 sources(uint i) {
  uint rest = i;
  uvec3 at = uvec3(0);
  for (int d = int(p.rank) - 1; d >= 0; --d) {
    uint c = rest % p.dims[d];
    rest /= p.dims[d];
    at += c * uvec3(p.c_strides[d], p.x_strides[d], p.y_strides[d]);
  }
  return at;
}

void main() {
  uint i = flat_index();
  if (WORDS == 0) {
    const uint per_word = 4 / PART_BYTES;
    if (i * per_word >= p.count) return;
    uint packed = 0;
    for (uint k = 0; k < per_word && i * per_word + k < p.count; ++k) {
      uvec3 at = sources(i * per_word + k);
      uint part = BOOL_AT(cond, at.x) != 0 ? PART_AT(x, at.y, PART_BYTES)
                                           : PART_AT(y, at.z, PART_BYTES);
      packed |= part << (k * 8 * PART_BYTES);
    }
    result[i] = packed;
    return;
  }
  if (i >= p.count) return;
  uvec3 at = sources(i);
  bool pick_x = BOOL_AT(cond, at.x) != 0;
  for (uint w = 0; w < WORDS; ++w) {
    result[i * WORDS + w] = pick_x ? x[at.y * WORDS + w] : y[at.z * WORDS + w];
  }
}
