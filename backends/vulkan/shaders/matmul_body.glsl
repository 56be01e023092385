// The GEMM of matmul.comp (fp32 weights) and matmul_f16w.comp (fp16
// weights, VK_KHR_16bit_storage), which define WEIGHT_T, the element type
// of B, before including this file. Accumulation is fp32 in both. A single
// row (decode) goes to gemv_body.glsl instead.
//
// y[z] = alpha * A[z] B[z] + beta * bias for a batch of matrices. Each
// workgroup makes one 64x64 tile of y; each of its 16x16 invocations makes
// 4x4 outputs (rows ty + 16 i, columns tx + 16 j), stepping through K in
// slices of 16 staged in shared memory; bias and activation are applied on
// the way out. A and B are read through strides,
// so transposed operands and broadcast batches need no copies
// (kernels/matmul.cc).
layout(local_size_x = 16, local_size_y = 16) in;
#include "gemm_common.glsl"

const uint TILE = 64;
const uint STEP = 16;
shared float tile_a[STEP][TILE];  // [kk][row]
shared float tile_b[STEP][TILE];  // [kk][column]

void main() {
  uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
  uint lane = ty * 16 + tx;
  uint row0 = gl_WorkGroupID.y * TILE, col0 = gl_WorkGroupID.x * TILE;
  uint z = gl_WorkGroupID.z;
  uint a_base, b_base;
  batch_bases(z, a_base, b_base);
  float acc[4][4];
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) acc[i][j] = 0.0;

  for (uint k0 = 0; k0 < p.k; k0 += STEP) {
    // 1024 elements of each operand, 4 per invocation; neighbours read
    // neighbouring k of A and neighbouring columns of B.
    for (uint l = 0; l < 4; ++l) {
      uint e = lane + l * 256;
      uint kk = e % STEP, row = e / STEP;
      uint gr = row0 + row, gk = k0 + kk;
      tile_a[kk][row] =
          (gr < p.m && gk < p.k) ? a[a_base + gr * p.a_m + gk * p.a_k] : 0.0;
      uint col = e % TILE;
      kk = e / TILE;
      uint gc = col0 + col;
      gk = k0 + kk;
      tile_b[kk][col] =
          (gc < p.n && gk < p.k) ? float(b[b_base + gk * p.b_k + gc * p.b_n])
                               : 0.0;
    }
    barrier();
    for (uint kk = 0; kk < STEP; ++kk) {
      float av[4], bv[4];
      for (int i = 0; i < 4; ++i) av[i] = tile_a[kk][ty + 16 * i];
      for (int j = 0; j < 4; ++j) bv[j] = tile_b[kk][tx + 16 * j];
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) acc[i][j] += av[i] * bv[j];
    }
    barrier();
  }

  for (int i = 0; i < 4; ++i) {
    uint r = row0 + ty + 16 * i;
    if (r >= p.m) continue;
    for (int j = 0; j < 4; ++j) {
      uint col = col0 + tx + 16 * j;
      if (col < p.n) store_output(z, r, col, acc[i][j]);
    }
  }
}
