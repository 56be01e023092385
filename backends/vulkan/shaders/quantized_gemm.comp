#version 450
// The many-row product of a weight-only quantized Linear (prefill), y =
// act(X W_real + bias) (quantized_linear_common.glsl). As the fp32 GEMM
// (matmul_body.glsl): a workgroup makes one 64x64 tile of y, each of its
// 16x16 invocations 4x4 outputs, stepping through K in slices of 16 staged
// in shared memory; here the slice of W is dequantised on the way in (a
// slice never straddles a block: blocks are multiples of 16 codes), so the
// inner loop is plain fp32.
#include "common.glsl"
layout(local_size_x = 16, local_size_y = 16) in;
#include "quantized_linear_common.glsl"

const uint TILE = 64;
const uint STEP = 16;
shared float tile_x[STEP][TILE];  // [kk][row]
shared float tile_w[STEP][TILE];  // [kk][column], dequantised

void main() {
  uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
  uint lane = ty * 16 + tx;
  uint col_tiles = (p.n + TILE - 1) / TILE;
  uint tile = group_index();
  // Whole workgroups past the last tile (the spread grid's tail) leave
  // before the barriers together.
  if (tile >= col_tiles * ((p.m + TILE - 1) / TILE)) return;
  uint row0 = (tile / col_tiles) * TILE, col0 = (tile % col_tiles) * TILE;
  float acc[4][4];
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) acc[i][j] = 0.0;

  // Invocation `lane` dequantises 4 codes of one column: k0 + quarter * 4..
  uint w_col = lane >> 2, quarter = lane & 3u;
  uint gc = col0 + w_col;
  for (uint k0 = 0; k0 < p.k; k0 += STEP) {
    for (uint l = 0; l < 4; ++l) {
      uint e = lane + l * 256;
      uint kk = e % STEP, row = e / STEP;
      uint gr = row0 + row, gk = k0 + kk;
      tile_x[kk][row] = (gr < p.m && gk < p.k) ? x[gr * p.k + gk] : 0.0;
    }
    uint block = k0 >> p.block_shift;
    float zero = 0.0, s = 0.0;
    if (gc < p.n) {
      zero = block_zero_point(gc, block);
      s = block_scale(gc, block);
    }
    for (uint j = 0; j < 4; ++j) {
      uint kk = quarter * 4u + j, gk = k0 + kk;
      tile_w[kk][w_col] =
          (gc < p.n && gk < p.k) ? (float(w_code(gc, gk)) - zero) * s : 0.0;
    }
    barrier();
    for (uint kk = 0; kk < STEP; ++kk) {
      float av[4], bv[4];
      for (int i = 0; i < 4; ++i) av[i] = tile_x[kk][ty + 16 * i];
      for (int j = 0; j < 4; ++j) bv[j] = tile_w[kk][tx + 16 * j];
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
      if (col < p.n) store_output(r, col, acc[i][j]);
    }
  }
}
