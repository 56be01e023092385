#version 450
// Conv (1-D as 2-D with height 1, 2-D; grouped and depthwise): one
// invocation per output element (n, co, oh, ow) summing its group's input
// channels over the kernel window. Weights are (C_out, C_in / group, kH, kW).
#include "common.glsl"
#include "flat_index.glsl"
layout(constant_id = 1) const uint HAS_BIAS = 0;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer W { float w[]; };
layout(std430, binding = 2) readonly buffer Bias { float bias[]; };
layout(std430, binding = 3) writeonly buffer Y { float y[]; };
layout(push_constant) uniform Push {
  uint count;
  uint c_in, c_out, group;
  uint in_h, in_w, out_h, out_w;
  uint k_h, k_w;
  uint stride_h, stride_w;
  uint dilation_h, dilation_w;
  int pad_top, pad_left;
} p;

void main() {
  uint i = flat_index();
  if (i >= p.count) return;
  uint ow = i % p.out_w;
  uint oh = (i / p.out_w) % p.out_h;
  uint co = (i / (p.out_w * p.out_h)) % p.c_out;
  uint n = i / (p.out_w * p.out_h * p.c_out);
  uint in_per_group = p.c_in / p.group;
  uint ci0 = (co / (p.c_out / p.group)) * in_per_group;
  float acc = HAS_BIAS != 0 ? bias[co] : 0.0;
  for (uint cg = 0; cg < in_per_group; ++cg) {
    uint x_plane = (n * p.c_in + ci0 + cg) * p.in_h * p.in_w;
    uint w_plane = (co * in_per_group + cg) * p.k_h * p.k_w;
    for (uint kh = 0; kh < p.k_h; ++kh) {
      int ih = int(oh * p.stride_h + kh * p.dilation_h) - p.pad_top;
      if (ih < 0 || ih >= int(p.in_h)) continue;
      for (uint kw = 0; kw < p.k_w; ++kw) {
        int iw = int(ow * p.stride_w + kw * p.dilation_w) - p.pad_left;
        if (iw < 0 || iw >= int(p.in_w)) continue;
        acc += x[x_plane + uint(ih) * p.in_w + uint(iw)] *
               w[w_plane + kh * p.k_w + kw];
      }
    }
  }
  y[i] = acc;
}
