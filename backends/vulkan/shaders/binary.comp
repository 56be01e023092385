#version 450
// out[i] = a[ia] op b[ib] with numpy broadcasting: i is split over the
// output dims and each input reads through its own strides (0 where it is
// broadcast). Op codes: kernels/elementwise.cc kBinaryOps.
#include "common.glsl"
#include "flat_index.glsl"
layout(constant_id = 1) const uint OP = 0;
layout(std430, binding = 0) readonly buffer A { float a[]; };
layout(std430, binding = 1) readonly buffer B { float b[]; };
layout(std430, binding = 2) writeonly buffer Out { float y[]; };
layout(push_constant) uniform Push {
  uint count;
  uint rank;
  uint dims[MAX_RANK];
  uint a_strides[MAX_RANK];
  uint b_strides[MAX_RANK];
} p;

void main() {
  uint i = flat_index();
  if (i >= p.count) return;
  uint rest = i, ia = 0, ib = 0;
  for (int d = int(p.rank) - 1; d >= 0; --d) {
    uint c = rest % p.dims[d];
    rest /= p.dims[d];
    ia += c * p.a_strides[d];
    ib += c * p.b_strides[d];
  }
  float u = a[ia], v = b[ib];
  float r = 0.0;
  switch (OP) {
    case 0: r = u + v; break;
    case 1: r = u - v; break;
    case 2: r = u * v; break;
    case 3: r = u / v; break;
    case 4: r = pow(u, v); break;
    case 5: r = max(u, v); break;
    case 6: r = min(u, v); break;
    case 8: r = u - v * trunc(u / v); break;  // Mod, fmod=1 (C fmod)
    case 7: r = (u < 0.0 && v == floor(v)) ?
                (mod(v, 2.0) == 0.0 ? pow(-u, v) : -pow(-u, v)) : pow(u, v);
            break;
  }
  y[i] = r;
}
