// The single-row product (M = 1, a decode step) of gemv.comp and
// gemv_f16w.comp: y[z] = act(alpha * a[z] B[z] + beta * bias). The tiled
// GEMM would spend 63 of its 64 tile rows on padding and walk K in steps of
// 16 with two barriers each; here every invocation streams its share of B
// once, in the order B is laid out, and a workgroup sums the shares in
// shared memory.
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

shared float partial[8][32];

void main() {
  uint x = gl_LocalInvocationID.x, yi = gl_LocalInvocationID.y;
  uint z = gl_WorkGroupID.z;
  uint a_base, b_base;
  batch_bases(z, a_base, b_base);
  uint col = K_INNER == 0 ? gl_WorkGroupID.x * 32 + x
                          : gl_WorkGroupID.x * 8 + yi;
  uint k0 = K_INNER == 0 ? yi : x;
  uint stride = K_INNER == 0 ? 8 : 32;
  float dot = 0.0;
  if (col < p.n) {
    for (uint kk = k0; kk < p.k; kk += stride) {
      dot += a[a_base + kk * p.a_k] * float(b[b_base + kk * p.b_k + col * p.b_n]);
    }
  }
  partial[yi][x] = dot;
  barrier();
  if (K_INNER == 0) {
    if (yi != 0 || col >= p.n) return;
    float sum = 0.0;
    for (uint i = 0; i < 8; ++i) sum += partial[i][x];
    store_output(z, 0, col, sum);
  } else {
    if (x != 0 || col >= p.n) return;
    float sum = 0.0;
    for (uint i = 0; i < 32; ++i) sum += partial[yi][i];
    store_output(z, 0, col, sum);
  }
}
