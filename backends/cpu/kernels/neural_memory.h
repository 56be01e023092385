// The CPU kernels of seqrt::NeuralMemory for one (batch, head): the chunked
// parallel form (prefill) and the token step (decode). Exposed so tests and
// benchmarks can run either path on the same data.
#pragma once

#include <cstdint>
#include <vector>

#include "ops/sequence/neural_memory.h"

namespace seqrt::cpu {

// One (b, h) row of the op, all f32, row-major. `state` holds 3·P floats
// (weights W1[,W2], momentum S, anchor weights) and is updated in place.
struct NeuralMemoryHead {
  const float* q = nullptr;  // (T, d)
  const float* k = nullptr;
  const float* v = nullptr;
  const float* theta = nullptr;  // (T)
  const float* eta = nullptr;
  const float* alpha = nullptr;
  float* y = nullptr;  // (T, d)
  float* state = nullptr;
  int64_t position = 0;  // absolute position of the first token
};

// Per-thread buffers of the chunked form, sized for min(chunk, T) tokens.
class NeuralMemoryScratch {
 public:
  explicit NeuralMemoryScratch(const NeuralMemoryDims& n);

  int64_t rows = 0;
  std::vector<float> hidden, act, deriv;  // (rows, m): k·A1, act, act'
  std::vector<float> residual;            // (rows, d): r = 2(M_A(k) − v)
  std::vector<float> back;                // (rows, m): ∂ℓ/∂h
  std::vector<float> q_hidden, q_act;     // (rows, m): retrieval
  std::vector<float> scores;              // (rows, rows)
  std::vector<float> part_a, part_b;      // (rows, max(d, m))
  std::vector<double> weights;            // (rows, rows) retrieval coefficients
  std::vector<double> momentum;    // (rows): one row of momentum coefficients
  std::vector<double> row_coeffs;  // per-row β, c and end terms
};

// Chunk-parallel form: per chunk, the memory's forward and backward at the
// anchor for all tokens as matrix products; momentum and forgetting as
// closed-form weights over the chunk, so weights are formed only at the
// chunk's end and retrieval goes through the same weighted sums.
void neural_memory_head_chunked(const NeuralMemoryDims& n,
                                const NeuralMemoryHead& head,
                                NeuralMemoryScratch& scratch);

// Token by token with vectorised rank-1 updates (decode, chunk_size 1).
void neural_memory_head_token_step(const NeuralMemoryDims& n,
                                   const NeuralMemoryHead& head);

// Fills one row of state from W1 (d,m) and W2 (m,d) of its head: weights and
// anchor = W, momentum = 0.
void neural_memory_initial_state(const NeuralMemoryDims& n, const float* w1,
                                 const float* w2, float* state);

// Activation and its derivative of x[0..count), vectorised.
void neural_memory_activation(const float* x, float* act, float* deriv,
                              int64_t count, bool gelu);

}  // namespace seqrt::cpu
