// The GEMM of matmul.comp (fp32 weights) and matmul_f16w.comp (fp16
// weights, VK_KHR_16bit_storage), which define WEIGHT_T, the element type
// of B, before including this file. Accumulation is fp32 in both.
//
// y[z] = alpha * A[z] B[z] + beta * bias for a batch of matrices. Each
// workgroup makes one 64x64 tile of y; each of its 16x16 invocations makes
// 4x4 outputs (rows ty + 16 i, columns tx + 16 j), stepping through K in
// slices of 16 staged in shared memory; bias and activation are applied on
// the way out. A and B are read through strides,
// so transposed operands and broadcast batches need no copies
// (kernels/matmul.cc).
layout(local_size_x = 16, local_size_y = 16) in;
layout(constant_id = 0) const uint HAS_BIAS = 0;
// seqrt::Linear's activation: 0 none, 1 relu, 2 gelu (erf), 3 gelu_tanh,
// 4 sigmoid, 5 silu.
layout(constant_id = 1) const uint ACT = 0;
layout(std430, binding = 0) readonly buffer A { float a[]; };
layout(std430, binding = 1) readonly buffer B { WEIGHT_T b[]; };
layout(std430, binding = 2) readonly buffer Bias { float c[]; };
layout(std430, binding = 3) writeonly buffer Y { float y[]; };
layout(push_constant) uniform Push {
  uint m, n, k;
  uint a_m, a_k;  // element (i, kk) of A at a_base + i * a_m + kk * a_k
  uint b_k, b_n;  // element (kk, j) of B at b_base + kk * b_k + j * b_n
  uint c_m, c_n;  // bias strides (0 where broadcast)
  float alpha, beta;
  uint batch_rank;
  uint batch_dims[4];
  uint a_batch[4];
  uint b_batch[4];
} p;

const uint TILE = 64;
const uint STEP = 16;
shared float tile_a[STEP][TILE];  // [kk][row]
shared float tile_b[STEP][TILE];  // [kk][column]

void main() {
  uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
  uint lane = ty * 16 + tx;
  uint row0 = gl_WorkGroupID.y * TILE, col0 = gl_WorkGroupID.x * TILE;
  uint z = gl_WorkGroupID.z;
  uint a_base = 0, b_base = 0, rest = z;
  for (int d = int(p.batch_rank) - 1; d >= 0; --d) {
    uint coord = rest % p.batch_dims[d];
    rest /= p.batch_dims[d];
    a_base += coord * p.a_batch[d];
    b_base += coord * p.b_batch[d];
  }
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

  uint out_base = z * p.m * p.n;
  for (int i = 0; i < 4; ++i) {
    uint r = row0 + ty + 16 * i;
    if (r >= p.m) continue;
    for (int j = 0; j < 4; ++j) {
      uint col = col0 + tx + 16 * j;
      if (col >= p.n) continue;
      float v = p.alpha * acc[i][j];
      if (HAS_BIAS != 0) v += p.beta * c[r * p.c_m + col * p.c_n];
      if (ACT == 1) v = max(v, 0.0);
      if (ACT == 2) v = 0.5 * v * (1.0 + erf_approx(v * 0.70710678118));
      if (ACT == 3) {
        v = 0.5 * v * (1.0 + tanh(0.7978845608 * (v + 0.044715 * v * v * v)));
      }
      if (ACT == 4) v = 1.0 / (1.0 + exp(-v));
      if (ACT == 5) v = v / (1.0 + exp(-v));
      y[out_base + r * p.n + col] = v;
    }
  }
}
