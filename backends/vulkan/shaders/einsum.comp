#version 450
// Einsum of one or two f32 operands, one output element per invocation:
// out[o] (+)= sum over the contracted index range [sum_begin, sum_end) of
// A[a(o, s)] * B[b(o, s)]. The planner (kernels/einsum.cc) turns the
// equation into per-label sizes and strides (diagonals add the strides of a
// repeated label, broadcast dims get stride 0), passed as specialisation
// constants; long contractions run as several dispatches that accumulate.
#include "common.glsl"
#include "flat_index.glsl"
layout(constant_id = 1) const uint OPERANDS = 2;
layout(constant_id = 2) const uint OUT_RANK = 0;
layout(constant_id = 3) const uint OD0 = 1;
layout(constant_id = 4) const uint OD1 = 1;
layout(constant_id = 5) const uint OD2 = 1;
layout(constant_id = 6) const uint OD3 = 1;
layout(constant_id = 7) const uint OD4 = 1;
layout(constant_id = 8) const uint OD5 = 1;
layout(constant_id = 9) const uint OA0 = 0;
layout(constant_id = 10) const uint OA1 = 0;
layout(constant_id = 11) const uint OA2 = 0;
layout(constant_id = 12) const uint OA3 = 0;
layout(constant_id = 13) const uint OA4 = 0;
layout(constant_id = 14) const uint OA5 = 0;
layout(constant_id = 15) const uint OB0 = 0;
layout(constant_id = 16) const uint OB1 = 0;
layout(constant_id = 17) const uint OB2 = 0;
layout(constant_id = 18) const uint OB3 = 0;
layout(constant_id = 19) const uint OB4 = 0;
layout(constant_id = 20) const uint OB5 = 0;
layout(constant_id = 21) const uint SUM_RANK = 0;
layout(constant_id = 22) const uint SD0 = 1;
layout(constant_id = 23) const uint SD1 = 1;
layout(constant_id = 24) const uint SD2 = 1;
layout(constant_id = 25) const uint SD3 = 1;
layout(constant_id = 26) const uint SD4 = 1;
layout(constant_id = 27) const uint SD5 = 1;
layout(constant_id = 28) const uint SA0 = 0;
layout(constant_id = 29) const uint SA1 = 0;
layout(constant_id = 30) const uint SA2 = 0;
layout(constant_id = 31) const uint SA3 = 0;
layout(constant_id = 32) const uint SA4 = 0;
layout(constant_id = 33) const uint SA5 = 0;
layout(constant_id = 34) const uint SB0 = 0;
layout(constant_id = 35) const uint SB1 = 0;
layout(constant_id = 36) const uint SB2 = 0;
layout(constant_id = 37) const uint SB3 = 0;
layout(constant_id = 38) const uint SB4 = 0;
layout(constant_id = 39) const uint SB5 = 0;

layout(std430, binding = 0) readonly buffer A { float a[]; };
// With one operand B is bound to A and never read.
layout(std430, binding = 1) readonly buffer B { float b[]; };
layout(std430, binding = 2) buffer Y { float y[]; };
layout(push_constant) uniform Push {
  uint count;       // output elements
  uint sum_begin;   // this dispatch's part of the contracted index range
  uint sum_end;
  uint accumulate;  // 0: the first part writes, later parts add
} p;

void main() {
  uint o = flat_index();
  if (o >= p.count) return;
  uint out_dims[MAX_RANK] = uint[MAX_RANK](OD0, OD1, OD2, OD3, OD4, OD5);
  uint out_a[MAX_RANK] = uint[MAX_RANK](OA0, OA1, OA2, OA3, OA4, OA5);
  uint out_b[MAX_RANK] = uint[MAX_RANK](OB0, OB1, OB2, OB3, OB4, OB5);
  uint sum_dims[MAX_RANK] = uint[MAX_RANK](SD0, SD1, SD2, SD3, SD4, SD5);
  uint sum_a[MAX_RANK] = uint[MAX_RANK](SA0, SA1, SA2, SA3, SA4, SA5);
  uint sum_b[MAX_RANK] = uint[MAX_RANK](SB0, SB1, SB2, SB3, SB4, SB5);
  uint base_a = 0;
  uint base_b = 0;
  uint rest = o;
  for (int d = int(OUT_RANK) - 1; d >= 0; --d) {
    uint coord = rest % out_dims[d];
    rest /= out_dims[d];
    base_a += coord * out_a[d];
    base_b += coord * out_b[d];
  }
  float acc = 0.0;
  for (uint s = p.sum_begin; s < p.sum_end; ++s) {
    uint ia = base_a;
    uint ib = base_b;
    uint r = s;
    for (int d = int(SUM_RANK) - 1; d >= 0; --d) {
      uint coord = r % sum_dims[d];
      r /= sum_dims[d];
      ia += coord * sum_a[d];
      ib += coord * sum_b[d];
    }
    acc += OPERANDS == 2 ? a[ia] * b[ib] : a[ia];
  }
  y[o] = p.accumulate != 0 ? y[o] + acc : acc;
}
