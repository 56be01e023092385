#include "backends/cuda/kernels/column_scan.h"
#include "backends/cuda/kernels/ssd_step.cuh"

namespace seqrt::cuda {
namespace {

struct Launch {
  int threads_per_column;
  int rows_per_thread;
  int cols_per_block;
  int chunk;
};

__device__ const float* view_base(const ScanView& view, int64_t b,
                                  int64_t head) {
  return view.data + b * view.batch + (head / view.head_divisor) * view.head;
}

// SSD's step size Δ_t of head h; `dt` is the head's base in the dt input.
__device__ float ssd_delta(const ColumnScanArgs& a, const float* dt, int64_t h,
                           int64_t t) {
  return ssd_step_size(dt[t * a.decay.step],
                       a.dt_bias != nullptr ? a.dt_bias[h] : 0.0f,
                       a.dt_softplus, a.dt_min, a.dt_max);
}

// Sum over the `width` lanes that share a column (width divides 32).
__device__ float sum_lanes(float value, int width) {
  for (int offset = width / 2; offset > 0; offset /= 2) {
    value += __shfl_xor_sync(0xffffffffu, value, offset, width);
  }
  return value;
}

// Stages steps [t0, t0 + len) of the block's inputs into shared memory:
// keys (scaled), per-row decays, queries and the block's values, then one
// (decay factor, β) pair per step.
__device__ void stage_chunk(const ColumnScanArgs& a, const Launch& launch,
                            int64_t b, int64_t h, int64_t col0, int count,
                            int64_t t0, int len, float* s_key, float* s_row,
                            float* s_query, float* s_value, float* s_scalar) {
  const int64_t rows = a.rows;
  const int64_t queries = a.queries;
  const float* key = view_base(a.key, b, h);
  const float* decay = a.decay.data ? view_base(a.decay, b, h) : nullptr;
  for (int64_t idx = threadIdx.x; idx < len * rows; idx += blockDim.x) {
    const int64_t t = idx / rows;
    const int64_t i = idx % rows;
    const int64_t step = t0 + t;
    float scale = a.key_scale;
    if (a.decay_kind == ScanDecay::kSsd) scale *= ssd_delta(a, decay, h, step);
    s_key[idx] = key[step * a.key.step + i * a.key.index] * scale;
    if (a.decay_kind == ScanDecay::kExpPerRow) {
      s_row[idx] = expf(decay[step * a.decay.step + i * a.decay.index]);
    }
    for (int64_t q = 0; q < queries; ++q) {
      const float* query = view_base(a.query, b, h * queries + q);
      s_query[(t * queries + q) * rows + i] =
          query[step * a.query.step + i * a.query.index];
    }
  }
  const float* value = view_base(a.value, b, h);
  for (int idx = threadIdx.x; idx < len * count; idx += blockDim.x) {
    const int t = idx / count;
    const int c = idx % count;
    s_value[t * launch.cols_per_block + c] =
        value[(t0 + t) * a.value.step + (col0 + c) * a.value.index];
  }
  const float* beta = a.beta.data ? view_base(a.beta, b, h) : nullptr;
  for (int t = threadIdx.x; t < len; t += blockDim.x) {
    const int64_t step = t0 + t;
    float factor = 1.0f;
    switch (a.decay_kind) {
      case ScanDecay::kMultiply:
        factor = decay[step * a.decay.step];
        break;
      case ScanDecay::kExp:
        factor = expf(decay[step * a.decay.step]);
        break;
      case ScanDecay::kSsd:
        factor = expf(ssd_delta(a, decay, h, step) * a.ssd_a[h]);
        break;
      case ScanDecay::kNone:
      case ScanDecay::kExpPerRow:
        break;
    }
    s_scalar[2 * t] = factor;
    s_scalar[2 * t + 1] = a.delta_rule ? beta[step * a.beta.step] : 1.0f;
  }
}

// Grid: (column blocks, heads, batch). Threads: `threads_per_column` lanes
// per column; lane l holds rows l, l + lanes, ... of its column. Lanes
// past the last column compute on column col0 and write nothing, so every
// shuffle has the whole warp.
template <bool kRegisters>
__global__ void column_scan_kernel(ColumnScanArgs a, Launch launch) {
  extern __shared__ float shared[];
  const int chunk = launch.chunk;
  const int64_t rows = a.rows;
  const int64_t queries = a.queries;
  const int lanes = launch.threads_per_column;
  float* s_key = shared;
  float* s_row = s_key + chunk * rows;
  float* s_query = s_row + chunk * rows;
  float* s_value = s_query + chunk * queries * rows;
  float* s_scalar = s_value + chunk * launch.cols_per_block;
  float* s_state = s_scalar + 2 * chunk;

  const int64_t b = blockIdx.z;
  const int64_t h = blockIdx.y;
  const int64_t col0 = int64_t(blockIdx.x) * launch.cols_per_block;
  const int count =
      static_cast<int>(min(int64_t(launch.cols_per_block), a.cols - col0));
  const int local = threadIdx.x / lanes;
  const int lane = threadIdx.x % lanes;
  const bool active = local < count;
  const int slot = active ? local : 0;
  const int64_t col = col0 + slot;
  const int64_t state_base = (b * a.heads + h) * rows * a.cols;

  float reg[kRegisters ? kMaxRowsPerThread : 1];
  auto state = [&](int r) -> float& {
    if constexpr (kRegisters) {
      return reg[r];
    } else {
      return s_state[r * blockDim.x + threadIdx.x];
    }
  };
  // A compile-time bound in registers, so the array is never indexed
  // dynamically (which would move it to local memory).
  const int bound = kRegisters ? kMaxRowsPerThread : launch.rows_per_thread;
#pragma unroll
  for (int r = 0; r < bound; ++r) {
    if (r >= launch.rows_per_thread) break;
    const int64_t i = lane + int64_t(r) * lanes;
    state(r) =
        i < rows && a.past_state != nullptr
            ? a.past_state[state_base + i * a.state_row + col * a.state_col]
            : 0.0f;
  }
  const float skip = a.skip != nullptr ? a.skip[h] : 0.0f;

  for (int64_t t0 = 0; t0 < a.steps; t0 += chunk) {
    const int len = static_cast<int>(min(int64_t(chunk), a.steps - t0));
    stage_chunk(a, launch, b, h, col0, count, t0, len, s_key, s_row, s_query,
                s_value, s_scalar);
    __syncthreads();
    for (int t = 0; t < len; ++t) {
      const float* key = s_key + t * rows;
      const float factor = s_scalar[2 * t];
      const bool per_row = a.decay_kind == ScanDecay::kExpPerRow;
      float dot = 0.0f;  // S[:, j]·k after the decay
#pragma unroll
      for (int r = 0; r < bound; ++r) {
        if (r >= launch.rows_per_thread) break;
        const int64_t i = lane + int64_t(r) * lanes;
        if (i >= rows) break;
        state(r) *= per_row ? s_row[t * rows + i] : factor;
        dot += state(r) * key[i];
      }
      const float v = s_value[t * launch.cols_per_block + slot];
      float u = v;
      if (a.delta_rule) u = s_scalar[2 * t + 1] * (v - sum_lanes(dot, lanes));
#pragma unroll
      for (int r = 0; r < bound; ++r) {
        if (r >= launch.rows_per_thread) break;
        const int64_t i = lane + int64_t(r) * lanes;
        if (i >= rows) break;
        state(r) += key[i] * u;
      }
      const int64_t step = t0 + t;
      for (int64_t q = 0; q < queries; ++q) {
        const float* query = s_query + (t * queries + q) * rows;
        float o = 0.0f;
#pragma unroll
        for (int r = 0; r < bound; ++r) {
          if (r >= launch.rows_per_thread) break;
          const int64_t i = lane + int64_t(r) * lanes;
          if (i >= rows) break;
          o += query[i] * state(r);
        }
        o = sum_lanes(o, lanes);
        if (!active || lane != 0) continue;
        float y = a.out_scale * o + skip * v;
        if (a.gate != nullptr) {
          const float z = a.gate[b * a.value.batch +
                                 (h / a.value.head_divisor) * a.value.head +
                                 step * a.value.step + col * a.value.index];
          y *= z / (1.0f + expf(-z));
        }
        a.out[b * a.out_batch + (h * queries + q) * a.out_head +
              step * a.out_step + col] = y;
      }
    }
    // The next chunk overwrites the staging.
    __syncthreads();
  }
  if (!active || a.present_state == nullptr) return;
#pragma unroll
  for (int r = 0; r < bound; ++r) {
    if (r >= launch.rows_per_thread) break;
    const int64_t i = lane + int64_t(r) * lanes;
    if (i >= rows) break;
    a.present_state[state_base + i * a.state_row + col * a.state_col] =
        state(r);
  }
}

template <bool kRegisters>
cudaError_t launch_typed(const ColumnScanArgs& args,
                         const ColumnScanTiling& tiling, dim3 grid,
                         cudaStream_t stream) {
  if (tiling.shared_bytes > 48 * 1024) {
    cudaError_t error =
        cudaFuncSetAttribute(column_scan_kernel<kRegisters>,
                             cudaFuncAttributeMaxDynamicSharedMemorySize,
                             static_cast<int>(tiling.shared_bytes));
    if (error != cudaSuccess) return error;
  }
  Launch launch{tiling.threads_per_column, tiling.rows_per_thread,
                tiling.cols_per_block, tiling.chunk_length};
  column_scan_kernel<kRegisters>
      <<<grid, tiling.threads(), tiling.shared_bytes, stream>>>(args, launch);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_column_scan(const ColumnScanArgs& args,
                               const ColumnScanTiling& tiling,
                               cudaStream_t stream) {
  if (args.batch == 0 || args.heads == 0 || args.rows == 0 || args.cols == 0) {
    return cudaSuccess;
  }
  if (args.batch > 65535 || args.heads > 65535) {
    return cudaErrorInvalidConfiguration;
  }
  dim3 grid(static_cast<unsigned>((args.cols + tiling.cols_per_block - 1) /
                                  tiling.cols_per_block),
            static_cast<unsigned>(args.heads),
            static_cast<unsigned>(args.batch));
  return tiling.state_home == StateHome::kRegisters
             ? launch_typed<true>(args, tiling, grid, stream)
             : launch_typed<false>(args, tiling, grid, stream);
}

}  // namespace seqrt::cuda
