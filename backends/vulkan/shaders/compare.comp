#version 450
// Equal, Less, Greater, LessOrEqual, GreaterOrEqual with numpy broadcasting
// into bools. Each invocation makes the 4 bools of one output word, so no
// two invocations write the same word. TYPE: 0 f32, 1 i32, 2 i64 (as low
// and high words). OP: kernels/logic_ops.cc kCompareOps.
#include "common.glsl"
#include "flat_index.glsl"
layout(constant_id = 1) const uint OP = 0;
layout(constant_id = 2) const uint TYPE = 0;
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

// -1, 0 or 1 as u compares with v.
int order(uint ia, uint ib) {
  if (TYPE == 0) {
    float u = uintBitsToFloat(a[ia]), v = uintBitsToFloat(b[ib]);
    return u < v ? -1 : (u > v ? 1 : (u == v ? 0 : 2));  // 2: NaN
  }
  if (TYPE == 1) {
    int u = int(a[ia]), v = int(b[ib]);
    return u < v ? -1 : (u > v ? 1 : 0);
  }
  int uh = int(a[2 * ia + 1]), vh = int(b[2 * ib + 1]);
  if (uh != vh) return uh < vh ? -1 : 1;
  uint ul = a[2 * ia], vl = b[2 * ib];
  return ul < vl ? -1 : (ul > vl ? 1 : 0);
}

bool holds(int o) {
  switch (OP) {
    case 0: return o == 0;
    case 1: return o == -1;
    case 2: return o == 1;
    case 3: return o == -1 || o == 0;
    case 4: return o == 1 || o == 0;
  }
  return false;
}

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
    if (holds(order(ia, ib))) packed |= 1u << (8 * k);
  }
  result[word] = packed;
}
