#version 450
// Where: out[i] = cond ? x : y with numpy broadcasting of all three; cond
// is bytes (bools), x and y are WORDS 32-bit words per element (f32 and
// i32: 1, i64: 2).
#include "common.glsl"
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint WORDS = 1;
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

void main() {
  uint i = flat_index();
  if (i >= p.count) return;
  uint rest = i, ic = 0, ix = 0, iy = 0;
  for (int d = int(p.rank) - 1; d >= 0; --d) {
    uint c = rest % p.dims[d];
    rest /= p.dims[d];
    ic += c * p.c_strides[d];
    ix += c * p.x_strides[d];
    iy += c * p.y_strides[d];
  }
  bool pick_x = BOOL_AT(cond, ic) != 0;
  for (uint w = 0; w < WORDS; ++w) {
    result[i * WORDS + w] = pick_x ? x[ix * WORDS + w] : y[iy * WORDS + w];
  }
}
