// The few-row product (M <= 8: a decode step, or a few sequences decoded
// together) of gemv.comp and gemv_f16w.comp: y[z] = act(alpha * A[z] B[z] +
// beta * bias). The tiled GEMM would spend most of its 64 tile rows on
// padding and walk K in steps of 16 with two barriers each; here every
// invocation streams its share of B once, in the order B is laid out, using
// each value for all ROWS rows, and a workgroup sums the shares in shared
// memory.
//
// K_INNER 0 (B's columns adjacent, b_n = 1: MatMul, Linear, Gemm): the
// workgroup makes 32 columns; its 8 rows of invocations take every 8th k,
// so the 32 invocations of a row read 32 adjacent values of B.
// K_INNER 1 (B's k adjacent, b_k = 1: Gemm with transB): the workgroup
// makes 8 columns; the 32 invocations of a row take every 32nd k of one
// column, again reading adjacent values.
layout(local_size_x = 32, local_size_y = 8) in;
#include "gemm_common.glsl"
layout(constant_id = 2) const uint K_INNER = 0;
layout(constant_id = 3) const uint ROWS = 1;  // M, at most MAX_ROWS
const uint MAX_ROWS = 8;

shared float partial[ROWS * 256];  // [row][yi][x]

void main() {
  uint x = gl_LocalInvocationID.x, yi = gl_LocalInvocationID.y;
  uint z = gl_WorkGroupID.z;
  uint a_base, b_base;
  batch_bases(z, a_base, b_base);
  uint col = K_INNER == 0 ? gl_WorkGroupID.x * 32 + x
                          : gl_WorkGroupID.x * 8 + yi;
  uint k0 = K_INNER == 0 ? yi : x;
  uint stride = K_INNER == 0 ? 8 : 32;
  float dot[MAX_ROWS];
  for (uint r = 0; r < ROWS; ++r) dot[r] = 0.0;
  if (col < p.n) {
    for (uint kk = k0; kk < p.k; kk += stride) {
      float w = float(b[b_base + kk * p.b_k + col * p.b_n]);
      for (uint r = 0; r < ROWS; ++r) {
        dot[r] += a[a_base + r * p.a_m + kk * p.a_k] * w;
      }
    }
  }
  for (uint r = 0; r < ROWS; ++r) partial[r * 256 + yi * 32 + x] = dot[r];
  barrier();
  if (col >= p.n || (K_INNER == 0 ? yi : x) >= ROWS) return;
  // The first ROWS invocations of each column's group sum one row each.
  uint r = K_INNER == 0 ? yi : x;
  float sum = 0.0;
  if (K_INNER == 0) {
    for (uint i = 0; i < 8; ++i) sum += partial[r * 256 + i * 32 + x];
  } else {
    for (uint i = 0; i < 32; ++i) sum += partial[r * 256 + yi * 32 + i];
  }
  store_output(z, r, col, sum);
}
