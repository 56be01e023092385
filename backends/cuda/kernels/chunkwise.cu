#include "backends/cuda/kernels/chunkwise.h"
#include "backends/cuda/kernels/ssd_step.cuh"

namespace seqrt::cuda {
namespace {

constexpr int kThreads = ChunkedStateTiling::kThreads;

__device__ const float* base_of(const ScanView& view, int64_t b, int64_t head) {
  return view.data + b * view.batch + (head / view.head_divisor) * view.head;
}

// SSD's Δ of step t of head h; `dt` is the head's base in the dt input.
__device__ float ssd_delta(const ChunkwiseArgs& a, const float* dt, int64_t h,
                           int64_t t) {
  return ssd_step_size(dt[t * a.log_decay.step],
                       a.dt_bias != nullptr ? a.dt_bias[h] : 0.0f,
                       a.dt_softplus, a.dt_min, a.dt_max);
}

// Grid: (column blocks, heads, batch), kThreads threads. Shared memory, as
// chunked_state_shared_bytes: S [rows][width], then per chunk K [C][rows],
// Q [queries][C][rows], V [C][width], cs [C], scores [C][C].
__global__ void chunkwise_kernel(ChunkwiseArgs a, int chunk, int64_t width) {
  extern __shared__ float shared[];
  const int64_t rows = a.rows;
  const int64_t queries = a.queries;
  float* s_state = shared;
  float* s_key = s_state + rows * width;
  float* s_query = s_key + chunk * rows;
  float* s_value = s_query + queries * chunk * rows;
  float* s_cs = s_value + chunk * width;
  float* s_score = s_cs + chunk;

  const int64_t b = blockIdx.z;
  const int64_t h = blockIdx.y;
  const int64_t col0 = int64_t(blockIdx.x) * width;
  const int64_t count = min(width, a.cols - col0);
  const int64_t state_base = (b * a.heads + h) * rows * a.cols;
  const float* key = base_of(a.key, b, h);
  const float* value = base_of(a.value, b, h);
  const float* log_decay =
      a.log_decay.data != nullptr ? base_of(a.log_decay, b, h) : nullptr;
  const float skip = a.skip != nullptr ? a.skip[h] : 0.0f;
  // z has the values' layout.
  const float* gate = a.gate != nullptr
                          ? a.gate + b * a.value.batch +
                                (h / a.value.head_divisor) * a.value.head
                          : nullptr;

  for (int64_t e = threadIdx.x; e < rows * count; e += kThreads) {
    const int64_t i = e / count;
    const int64_t j = e % count;
    s_state[i * width + j] = a.past_state != nullptr
                                 ? a.past_state[state_base + i * a.state_row +
                                                (col0 + j) * a.state_col]
                                 : 0.0f;
  }

  for (int64_t t0 = 0; t0 < a.steps; t0 += chunk) {
    const int64_t len = min(int64_t(chunk), a.steps - t0);
    for (int64_t e = threadIdx.x; e < len * rows; e += kThreads) {
      const int64_t t = e / rows;
      const int64_t i = e % rows;
      float scale = a.key_scale;
      if (a.ssd) scale *= ssd_delta(a, log_decay, h, t0 + t);
      s_key[e] = key[(t0 + t) * a.key.step + i * a.key.index] * scale;
      for (int64_t q = 0; q < queries; ++q) {
        const float* query = base_of(a.query, b, h * queries + q);
        s_query[(q * chunk + t) * rows + i] =
            query[(t0 + t) * a.query.step + i * a.query.index];
      }
    }
    for (int64_t e = threadIdx.x; e < len * count; e += kThreads) {
      const int64_t t = e / count;
      const int64_t j = e % count;
      s_value[t * width + j] =
          value[(t0 + t) * a.value.step + (col0 + j) * a.value.index];
    }
    if (threadIdx.x == 0) {
      float sum = 0.0f;
      for (int64_t t = 0; t < len; ++t) {
        if (a.ssd) {
          sum += ssd_delta(a, log_decay, h, t0 + t) * a.ssd_a[h];
        } else if (log_decay != nullptr) {
          sum += log_decay[(t0 + t) * a.log_decay.step];
        }
        s_cs[t] = sum;
      }
    }
    __syncthreads();

    for (int64_t q = 0; q < queries; ++q) {
      const float* s_q = s_query + q * chunk * rows;
      // Decay-weighted scores of the causal triangle; above it stays 0
      // and its exponent (which could be positive) is never formed.
      for (int64_t e = threadIdx.x; e < len * len; e += kThreads) {
        const int64_t t = e / len;
        const int64_t s = e % len;
        float score = 0.0f;
        if (s <= t) {
          for (int64_t i = 0; i < rows; ++i) {
            score += s_q[t * rows + i] * s_key[s * rows + i];
          }
          score *= expf(s_cs[t] - s_cs[s]);
        }
        s_score[t * chunk + s] = score;
      }
      __syncthreads();
      float* out = a.out + b * a.out_batch + (h * queries + q) * a.out_head;
      for (int64_t e = threadIdx.x; e < len * count; e += kThreads) {
        const int64_t t = e / count;
        const int64_t j = e % count;
        float inter = 0.0f;
        for (int64_t i = 0; i < rows; ++i) {
          inter += s_q[t * rows + i] * s_state[i * width + j];
        }
        float intra = 0.0f;
        for (int64_t s = 0; s <= t; ++s) {
          intra += s_score[t * chunk + s] * s_value[s * width + j];
        }
        float y = a.out_scale * (expf(s_cs[t]) * inter + intra) +
                  skip * s_value[t * width + j];
        if (a.gate != nullptr) {
          const float z =
              gate[(t0 + t) * a.value.step + (col0 + j) * a.value.index];
          y *= z / (1.0f + expf(-z));
        }
        out[(t0 + t) * a.out_step + col0 + j] = y;
      }
      // The next query's scores overwrite these; the state update below
      // must not run while outputs still read the old state.
      __syncthreads();
    }

    const float last = s_cs[len - 1];
    for (int64_t e = threadIdx.x; e < rows * count; e += kThreads) {
      const int64_t i = e / count;
      const int64_t j = e % count;
      float update = 0.0f;
      for (int64_t s = 0; s < len; ++s) {
        update +=
            expf(last - s_cs[s]) * s_key[s * rows + i] * s_value[s * width + j];
      }
      s_state[i * width + j] = expf(last) * s_state[i * width + j] + update;
    }
    // The next chunk's staging overwrites keys, values and decays.
    __syncthreads();
  }

  if (a.present_state == nullptr) return;
  for (int64_t e = threadIdx.x; e < rows * count; e += kThreads) {
    const int64_t i = e / count;
    const int64_t j = e % count;
    a.present_state[state_base + i * a.state_row + (col0 + j) * a.state_col] =
        s_state[i * width + j];
  }
}

}  // namespace

cudaError_t launch_chunkwise(const ChunkwiseArgs& args,
                             const ChunkedStateTiling& tiling,
                             cudaStream_t stream) {
  if (args.batch == 0 || args.heads == 0 || args.rows == 0 || args.cols == 0) {
    return cudaSuccess;
  }
  if (args.batch > 65535 || args.heads > 65535) {
    return cudaErrorInvalidConfiguration;
  }
  if (tiling.shared_bytes > 48 * 1024) {
    cudaError_t error = cudaFuncSetAttribute(
        chunkwise_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
        static_cast<int>(tiling.shared_bytes));
    if (error != cudaSuccess) return error;
  }
  dim3 grid(static_cast<unsigned>((args.cols + tiling.cols_per_block - 1) /
                                  tiling.cols_per_block),
            static_cast<unsigned>(args.heads),
            static_cast<unsigned>(args.batch));
  chunkwise_kernel<<<grid, kThreads, tiling.shared_bytes, stream>>>(
      args, tiling.chunk_length, tiling.cols_per_block);
  return cudaGetLastError();
}

}  // namespace seqrt::cuda
