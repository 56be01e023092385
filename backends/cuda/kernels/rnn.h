// Device kernels of RNN, GRU and LSTM (the design: rnn_plan.h). The input
// projection is the caller's (gemm.h); these run the state around it.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "backends/cuda/rnn_plan.h"

namespace seqrt::cuda {

// h and c (LSTM) in (directions, batch, hidden) order from initial_h /
// initial_c in the node's layout; zeros where one is null.
cudaError_t launch_rnn_init_state(const RnnCell& cell, int64_t batch,
                                  int64_t hidden, const float* initial_h,
                                  const float* initial_c, float* h, float* c,
                                  cudaStream_t stream);

// `steps` steps of the recurrence from the state in `h0` (and args.c),
// writing Y (when args.y) at each step's time position. h moves between
// `h0` and `h1` (args.h_prev/h_next are set here); `*final_h` is the
// buffer holding the last state.
cudaError_t launch_rnn_steps(RnnStepArgs args, float* h0, float* h1,
                             int64_t steps, const float** final_h,
                             cudaStream_t stream);

// Y_h / Y_c (either may be null) in the node's layout from the final
// state; rows of length 0 are left as they are (zeroed by the caller).
cudaError_t launch_rnn_store_state(const RnnCell& cell, int64_t batch,
                                   int64_t hidden, const int64_t* lens,
                                   const float* h, const float* c, float* y_h,
                                   float* y_c, cudaStream_t stream);

}  // namespace seqrt::cuda
