// Vector loops of seqrt::NeuralMemory's token step (neural_memory.cc,
// neural_memory_step_simd.cc).
#pragma once

#include <cstdint>

namespace seqrt::cpu {

// One token's update of one layer, W and S (rows × cols, row-major):
//   S_i = η·S_i − θ·left_i·right,  W_i = keep·W_i + S_i   (keep = 1 − α),
// and, with the new W, acc_a = xa·W and acc_b = xb·W (cols each; skipped
// when xa / xb is null). Accumulators must not alias the other arrays.
struct NmRowPass {
  float* w = nullptr;
  float* s = nullptr;
  int64_t rows = 0;
  int64_t cols = 0;
  const float* left = nullptr;   // (rows)
  const float* right = nullptr;  // (cols)
  float theta = 0, eta = 0, keep = 1;
  const float* xa = nullptr;  // (rows)
  float* acc_a = nullptr;     // (cols)
  const float* xb = nullptr;
  float* acc_b = nullptr;
};

void neural_memory_row_pass(const NmRowPass& pass);

// out_j = dot(w_j, x)·scale_j for the rows of w (rows × cols).
void neural_memory_row_dots(const float* w, int64_t rows, int64_t cols,
                            const float* x, const float* scale, float* out);

}  // namespace seqrt::cpu
