#version 450
// dst[dst_base + sum c_d * dst_strides[d]] = src[src_base + sum c_d *
// src_strides[d]] over every coordinate c of `dims`, in 32-bit words.
// Transpose, Slice, Concat, Split, Expand, Reshape and friends are all
// this copy with different strides (kernels/copy_ops.cc).
#include "common.glsl"
#include "flat_index.glsl"
layout(std430, binding = 0) readonly buffer Src { uint src[]; };
layout(std430, binding = 1) buffer Dst { uint dst[]; };
layout(push_constant) uniform Push {
  uint count;
  uint rank;
  int src_base;
  int dst_base;
  uint dims[MAX_RANK];
  int src_strides[MAX_RANK];
  int dst_strides[MAX_RANK];
} p;

void main() {
  uint i = flat_index();
  if (i >= p.count) return;
  uint rest = i;
  int s = p.src_base, t = p.dst_base;
  for (int d = int(p.rank) - 1; d >= 0; --d) {
    int c = int(rest % p.dims[d]);
    rest /= p.dims[d];
    s += c * p.src_strides[d];
    t += c * p.dst_strides[d];
  }
  dst[t] = src[s];
}
