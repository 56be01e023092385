#include "backends/cuda/kernels/rnn.h"

namespace seqrt::cuda {
namespace {

constexpr int kThreads = 256;

// Σ_k h[k]·row[k] over `n`, lanes striding k so a row is read coalesced;
// the xor reduction leaves the sum in every lane.
struct WarpDot {
  int64_t n;
  int lane;
  __device__ float operator()(const float* h, const float* row) const {
    float sum = 0.0f;
    for (int64_t k = lane; k < n; k += 32) sum += h[k] * row[k];
    for (int offset = 16; offset > 0; offset >>= 1) {
      sum += __shfl_xor_sync(0xffffffffu, sum, offset);
    }
    return sum;
  }
};

__global__ void rnn_step_kernel(RnnStepArgs args, int64_t s, int phase) {
  const int lane = threadIdx.x % 32;
  const int64_t warps = int64_t(gridDim.x) * (blockDim.x / 32);
  const int64_t units = args.cell.directions * args.batch * args.hidden;
  WarpDot dot{args.hidden, lane};
  // Whole warps take units, so every lane of a warp shares the unit's
  // branches and reaches each shuffle.
  for (int64_t u = blockIdx.x * int64_t(blockDim.x / 32) + threadIdx.x / 32;
       u < units; u += warps) {
    rnn_unit_step(args, u, s, phase, dot, lane == 0);
  }
}

__global__ void rnn_init_state_kernel(RnnCell cell, int64_t batch,
                                      int64_t hidden, const float* initial_h,
                                      const float* initial_c, float* h,
                                      float* c) {
  const int64_t n = cell.directions * batch * hidden;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    rnn_init_state_element(cell, batch, hidden, i, initial_h, initial_c, h, c);
  }
}

__global__ void rnn_store_state_kernel(RnnCell cell, int64_t batch,
                                       int64_t hidden, const int64_t* lens,
                                       const float* h, const float* c,
                                       float* y_h, float* y_c) {
  const int64_t n = cell.directions * batch * hidden;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    rnn_store_state_element(cell, batch, hidden, i, lens, h, c, y_h, y_c);
  }
}

}  // namespace

cudaError_t launch_rnn_init_state(const RnnCell& cell, int64_t batch,
                                  int64_t hidden, const float* initial_h,
                                  const float* initial_c, float* h, float* c,
                                  cudaStream_t stream) {
  const int64_t blocks =
      rnn_element_blocks(cell.directions * batch * hidden, kThreads);
  if (blocks == 0) return cudaSuccess;
  rnn_init_state_kernel<<<unsigned(blocks), kThreads, 0, stream>>>(
      cell, batch, hidden, initial_h, initial_c, h, c);
  return cudaGetLastError();
}

cudaError_t launch_rnn_steps(RnnStepArgs args, float* h0, float* h1,
                             int64_t steps, const float** final_h,
                             cudaStream_t stream) {
  *final_h = h0;
  const int64_t blocks = rnn_warp_blocks(
      args.cell.directions * args.batch * args.hidden, kThreads);
  if (blocks == 0) return cudaSuccess;
  const int phases = rnn_phases(args.cell);
  for (int64_t s = 0; s < steps; ++s) {
    args.h_prev = s % 2 == 0 ? h0 : h1;
    args.h_next = s % 2 == 0 ? h1 : h0;
    for (int phase = 0; phase < phases; ++phase) {
      rnn_step_kernel<<<unsigned(blocks), kThreads, 0, stream>>>(args, s,
                                                                 phase);
      const cudaError_t error = cudaGetLastError();
      if (error != cudaSuccess) return error;
    }
    *final_h = args.h_next;
  }
  return cudaSuccess;
}

cudaError_t launch_rnn_store_state(const RnnCell& cell, int64_t batch,
                                   int64_t hidden, const int64_t* lens,
                                   const float* h, const float* c, float* y_h,
                                   float* y_c, cudaStream_t stream) {
  const int64_t blocks =
      rnn_element_blocks(cell.directions * batch * hidden, kThreads);
  if (blocks == 0 || (y_h == nullptr && y_c == nullptr)) return cudaSuccess;
  rnn_store_state_kernel<<<unsigned(blocks), kThreads, 0, stream>>>(
      cell, batch, hidden, lens, h, c, y_h, y_c);
  return cudaGetLastError();
}

}  // namespace seqrt::cuda
