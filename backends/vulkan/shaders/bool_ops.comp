#version 450
// And, Or, Xor (numpy broadcasting) and Not on bools, which are bytes: each
// invocation makes the 4 bools of one output word, so no two invocations
// write the same word. OP: 0 And, 1 Or, 2 Xor, 3 Not (b is not read).
#include "common.glsl"
#include "flat_index.glsl"
layout(constant_id = 1) const uint OP = 0;
layout(std430, binding = 0) readonly buffer A { uint a[]; };
layout(std430, binding = 1) readonly buffer B { uint b[]; };
layout(std430, binding = 2) writeonly buffer Out { uint result[]; };
layout(push_constant) uniform Push {
  uint count;
  uint rank;
  uint dims[MAX_RANK];
  uint a_strides[MAX_RANK];
  uint b_strides[MAX_RANK];
} p;

void main() {
  uint word = flat_index();
  if (word * 4 >= p.count) return;
  uint packed = 0;
  for (uint k = 0; k < 4; ++k) {
    uint i = word * 4 + k;
    if (i >= p.count) break;
    uint rest = i, ia = 0, ib = 0;
    for (int d = int(p.rank) - 1; d >= 0; --d) {
      uint c = rest % p.dims[d];
      rest /= p.dims[d];
      ia += c * p.a_strides[d];
      ib += c * p.b_strides[d];
    }
    bool u = BOOL_AT(a, ia) != 0;
    bool v = OP == 3 ? false : BOOL_AT(b, ib) != 0;
    bool r = OP == 0 ? (u && v) : OP == 1 ? (u || v) : OP == 2 ? (u != v) : !u;
    if (r) packed |= 1u << (8 * k);
  }
  result[word] = packed;
}
