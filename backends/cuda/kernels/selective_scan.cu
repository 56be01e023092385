#include "backends/cuda/kernels/selective_scan.h"

namespace seqrt::cuda {
namespace {

struct Launch {
  int threads_per_channel;
  int states_per_thread;
  int channels_per_block;
  int chunk;
};

__device__ float softplus(float x) { return x <= 20.0f ? log1pf(expf(x)) : x; }

// Grid: (blocks per group, G, B). Shared memory per chunk: B and C [n][t],
// then u, Δ and y [channel][t] of the block's channels.
__global__ void selective_scan_kernel(SelectiveScanArgs args, Launch launch) {
  extern __shared__ float shared[];
  const int chunk = launch.chunk;
  const int64_t n_states = args.state_size;
  const int64_t length = args.length;
  const int64_t per_group = args.channels / args.groups;
  float* s_b = shared;
  float* s_c = s_b + n_states * chunk;
  float* s_u = s_c + n_states * chunk;
  float* s_delta = s_u + launch.channels_per_block * chunk;
  float* s_y = s_delta + launch.channels_per_block * chunk;

  const int64_t batch = blockIdx.z;
  const int64_t group = blockIdx.y;
  const int64_t first = blockIdx.x * int64_t(launch.channels_per_block);
  const int64_t count =
      min(int64_t(launch.channels_per_block), per_group - first);
  const int local = threadIdx.x / launch.threads_per_channel;
  const int lane = threadIdx.x % launch.threads_per_channel;
  // Threads past the group's last channel still take part in the
  // barriers and shuffles; they compute on in-bounds data and write nothing.
  const bool active = local < count;
  const int64_t channel = group * per_group + first + (active ? local : 0);
  const int64_t row = batch * args.channels + channel;

  float h[kMaxStatesPerThread];
  float a[kMaxStatesPerThread];
#pragma unroll
  for (int s = 0; s < kMaxStatesPerThread; ++s) {
    int64_t n = int64_t(lane) * launch.states_per_thread + s;
    bool valid = s < launch.states_per_thread && n < n_states;
    a[s] = valid ? args.a[channel * n_states + n] : 0.0f;
    h[s] = valid && args.past_state != nullptr
               ? args.past_state[row * n_states + n]
               : 0.0f;
  }
  const float d_skip = args.d_skip != nullptr ? args.d_skip[channel] : 0.0f;
  const float bias =
      args.delta_bias != nullptr ? args.delta_bias[channel] : 0.0f;
  const float* b_rows =
      args.b + (batch * args.groups + group) * n_states * length;
  const float* c_rows =
      args.c + (batch * args.groups + group) * n_states * length;
  const int64_t block_rows = batch * args.channels + group * per_group + first;

  for (int64_t t0 = 0; t0 < length; t0 += chunk) {
    const int len = static_cast<int>(min(int64_t(chunk), length - t0));
    for (int i = threadIdx.x; i < n_states * len; i += blockDim.x) {
      int64_t n = i / len;
      int t = i % len;
      s_b[n * chunk + t] = b_rows[n * length + t0 + t];
      s_c[n * chunk + t] = c_rows[n * length + t0 + t];
    }
    for (int i = threadIdx.x; i < count * len; i += blockDim.x) {
      int c = i / len;
      int t = i % len;
      int64_t index = (block_rows + c) * length + t0 + t;
      s_u[c * chunk + t] = args.u[index];
      s_delta[c * chunk + t] = args.delta[index];
    }
    __syncthreads();
    const int slot = active ? local : 0;
    for (int t = 0; t < len; ++t) {
      float dt = s_delta[slot * chunk + t] + bias;
      if (args.delta_softplus) dt = softplus(dt);
      const float u = s_u[slot * chunk + t];
      float partial = 0.0f;
#pragma unroll
      for (int s = 0; s < kMaxStatesPerThread; ++s) {
        int64_t n = int64_t(lane) * launch.states_per_thread + s;
        if (s < launch.states_per_thread && n < n_states) {
          h[s] = expf(dt * a[s]) * h[s] + dt * s_b[n * chunk + t] * u;
          partial += h[s] * s_c[n * chunk + t];
        }
      }
      for (int offset = launch.threads_per_channel / 2; offset > 0;
           offset /= 2) {
        partial += __shfl_xor_sync(0xffffffffu, partial, offset,
                                   launch.threads_per_channel);
      }
      if (active && lane == 0) s_y[local * chunk + t] = partial + d_skip * u;
    }
    __syncthreads();
    for (int i = threadIdx.x; i < count * len; i += blockDim.x) {
      int c = i / len;
      int t = i % len;
      int64_t index = (block_rows + c) * length + t0 + t;
      float y = s_y[c * chunk + t];
      if (args.z != nullptr) {
        float z = args.z[index];
        y *= z / (1.0f + expf(-z));
      }
      args.y[index] = y;
    }
    __syncthreads();
  }
  if (active && args.present_state != nullptr) {
#pragma unroll
    for (int s = 0; s < kMaxStatesPerThread; ++s) {
      int64_t n = int64_t(lane) * launch.states_per_thread + s;
      if (s < launch.states_per_thread && n < n_states) {
        args.present_state[row * n_states + n] = h[s];
      }
    }
  }
}

}  // namespace

cudaError_t launch_selective_scan(const SelectiveScanArgs& args,
                                  const ScanTiling& tiling,
                                  cudaStream_t stream) {
  if (args.batch == 0 || args.channels == 0) return cudaSuccess;
  int64_t per_group = args.channels / args.groups;
  dim3 grid(static_cast<unsigned>((per_group + tiling.channels_per_block - 1) /
                                  tiling.channels_per_block),
            static_cast<unsigned>(args.groups),
            static_cast<unsigned>(args.batch));
  Launch launch{tiling.threads_per_channel, tiling.states_per_thread,
                tiling.channels_per_block, tiling.chunk_length};
  if (tiling.shared_bytes > 48 * 1024) {
    cudaError_t error = cudaFuncSetAttribute(
        selective_scan_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
        static_cast<int>(tiling.shared_bytes));
    if (error != cudaSuccess) return error;
  }
  // Whole warps, so every shuffle has all 32 lanes; the extra threads
  // are inactive channels.
  int threads = (tiling.threads() + 31) / 32 * 32;
  selective_scan_kernel<<<grid, threads, tiling.shared_bytes, stream>>>(args,
                                                                        launch);
  return cudaGetLastError();
}

}  // namespace seqrt::cuda
