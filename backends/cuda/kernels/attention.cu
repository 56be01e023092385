#include <cfloat>

#include "backends/cuda/kernels/attention.h"

namespace seqrt::cuda {
namespace {

constexpr int kMaxColumnsPerLane = 8;  // dv <= 256
constexpr int kMaxKeysPerLane = 2;     // block_k <= 64

struct Tile {
  int block_q;
  int block_k;
};

// Key j of the concatenation past ++ new, as a row pointer.
__device__ const float* key_row(const AttentionArgs& a, int64_t b, int64_t h,
                                int64_t j) {
  if (j < a.past_length) {
    return a.past_key +
           ((b * a.kv_heads + h) * a.past_length + j) * a.head_size;
  }
  return a.k + ((b * a.kv_heads + h) * a.new_length + j - a.past_length) *
                   a.head_size;
}

__device__ const float* value_row(const AttentionArgs& a, int64_t b, int64_t h,
                                  int64_t j) {
  if (j < a.past_length) {
    return a.past_value +
           ((b * a.kv_heads + h) * a.past_length + j) * a.value_head_size;
  }
  return a.v + ((b * a.kv_heads + h) * a.new_length + j - a.past_length) *
                   a.value_head_size;
}

__device__ bool visible(const AttentionArgs& a, int64_t position, int64_t j) {
  if (a.causal && j > position) return false;
  if (a.window_left >= 0 && position - j > a.window_left) return false;
  if (a.window_right >= 0 && j - position > a.window_right) return false;
  return true;
}

// Grid (query blocks, Hq, B); each warp owns rows warp, warp + warps, ...
// of the block, each lane up to 2 keys of a tile and 8 output columns.
__global__ void attention_kernel(AttentionArgs a, Tile tile) {
  extern __shared__ float shared[];
  const int64_t d = a.head_size;
  const int64_t dv = a.value_head_size;
  float* s_q = shared;
  float* s_k = s_q + tile.block_q * d;
  float* s_v = s_k + tile.block_k * d;
  const int64_t b = blockIdx.z;
  const int64_t h = blockIdx.y;
  const int64_t kv_h = h / (a.q_heads / a.kv_heads);
  const int64_t first_row = blockIdx.x * int64_t(tile.block_q);
  const int64_t total = a.past_length + a.new_length;
  const int warps = blockDim.x / 32;
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const int rows_per_warp = (tile.block_q + warps - 1) / warps;

  for (int64_t i = threadIdx.x; i < tile.block_q * d; i += blockDim.x) {
    int64_t row = first_row + i / d;
    s_q[i] = row < a.q_length
                 ? a.q[((b * a.q_heads + h) * a.q_length + row) * d + i % d]
                 : 0.0f;
  }
  // Per owned row: running max, running sum and output columns.
  float m[4], l[4], acc[4][kMaxColumnsPerLane];
  for (int r = 0; r < 4; ++r) {
    m[r] = -FLT_MAX;
    l[r] = 0.0f;
#pragma unroll
    for (int c = 0; c < kMaxColumnsPerLane; ++c) acc[r][c] = 0.0f;
  }

  for (int64_t key0 = 0; key0 < total; key0 += tile.block_k) {
    const int keys = static_cast<int>(min(int64_t(tile.block_k), total - key0));
    __syncthreads();  // the previous tile is no longer read
    for (int64_t i = threadIdx.x; i < keys * d; i += blockDim.x) {
      s_k[i] = key_row(a, b, kv_h, key0 + i / d)[i % d];
    }
    for (int64_t i = threadIdx.x; i < keys * dv; i += blockDim.x) {
      s_v[i] = value_row(a, b, kv_h, key0 + i / dv)[i % dv];
    }
    __syncthreads();
    for (int r = 0; r < rows_per_warp && r < 4; ++r) {
      const int local = warp + r * warps;
      const int64_t row = first_row + local;
      if (local >= tile.block_q || row >= a.q_length) continue;  // warp-uniform
      const int64_t position = total - a.q_length + row;
      float p[kMaxKeysPerLane];
      float tile_max = -FLT_MAX;
#pragma unroll
      for (int s = 0; s < kMaxKeysPerLane; ++s) {
        int j = lane + 32 * s;
        p[s] = -FLT_MAX;
        if (j < keys && visible(a, position, key0 + j)) {
          float dot = 0.0f;
          for (int64_t e = 0; e < d; ++e)
            dot += s_q[local * d + e] * s_k[j * d + e];
          float score = a.scale * dot;
          if (a.softcap > 0.0f) score = a.softcap * tanhf(score / a.softcap);
          p[s] = score;
          tile_max = fmaxf(tile_max, score);
        }
      }
      float correction = 1.0f;
      if (a.sigmoid) {
#pragma unroll
        for (int s = 0; s < kMaxKeysPerLane; ++s) {
          p[s] = p[s] == -FLT_MAX
                     ? 0.0f
                     : 1.0f / (1.0f + expf(-(p[s] + a.sigmoid_bias)));
        }
      } else {
        for (int offset = 16; offset > 0; offset /= 2) {
          tile_max =
              fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, offset));
        }
        if (tile_max == -FLT_MAX) continue;  // no visible key in this tile
        float new_max = fmaxf(m[r], tile_max);
        correction = expf(m[r] - new_max);
        m[r] = new_max;
        float sum = 0.0f;
#pragma unroll
        for (int s = 0; s < kMaxKeysPerLane; ++s) {
          p[s] = p[s] == -FLT_MAX ? 0.0f : expf(p[s] - new_max);
          sum += p[s];
        }
        for (int offset = 16; offset > 0; offset /= 2) {
          sum += __shfl_xor_sync(0xffffffffu, sum, offset);
        }
        l[r] = l[r] * correction + sum;
      }
#pragma unroll
      for (int c = 0; c < kMaxColumnsPerLane; ++c) acc[r][c] *= correction;
      for (int j = 0; j < keys; ++j) {
        float weight = __shfl_sync(0xffffffffu, j < 32 ? p[0] : p[1], j % 32);
#pragma unroll
        for (int c = 0; c < kMaxColumnsPerLane; ++c) {
          int64_t column = lane + 32 * c;
          if (column < dv) acc[r][c] += weight * s_v[j * dv + column];
        }
      }
    }
  }
  for (int r = 0; r < rows_per_warp && r < 4; ++r) {
    const int local = warp + r * warps;
    const int64_t row = first_row + local;
    if (local >= tile.block_q || row >= a.q_length) continue;
    // A row with no visible key gives 0, never NaN.
    float inverse = a.sigmoid ? 1.0f : (l[r] > 0.0f ? 1.0f / l[r] : 0.0f);
    float* out = a.y + ((b * a.q_heads + h) * a.q_length + row) * dv;
#pragma unroll
    for (int c = 0; c < kMaxColumnsPerLane; ++c) {
      int64_t column = lane + 32 * c;
      if (column < dv) out[column] = acc[r][c] * inverse;
    }
  }
}

}  // namespace

cudaError_t launch_attention(const AttentionArgs& args,
                             const AttentionTiling& tiling,
                             cudaStream_t stream) {
  if (args.batch == 0 || args.q_heads == 0 || args.q_length == 0) {
    return cudaSuccess;
  }
  // Each warp keeps at most 4 rows in registers.
  if (tiling.block_q > 4 * tiling.warps || tiling.block_k > 64 ||
      args.value_head_size > 32 * kMaxColumnsPerLane) {
    return cudaErrorInvalidValue;
  }
  if (tiling.shared_bytes > 48 * 1024) {
    cudaError_t error = cudaFuncSetAttribute(
        attention_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
        static_cast<int>(tiling.shared_bytes));
    if (error != cudaSuccess) return error;
  }
  dim3 grid(static_cast<unsigned>((args.q_length + tiling.block_q - 1) /
                                  tiling.block_q),
            static_cast<unsigned>(args.q_heads),
            static_cast<unsigned>(args.batch));
  attention_kernel<<<grid, 32 * tiling.warps, tiling.shared_bytes, stream>>>(
      args, Tile{tiling.block_q, tiling.block_k});
  return cudaGetLastError();
}

}  // namespace seqrt::cuda
