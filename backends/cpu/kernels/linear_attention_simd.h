// Fused token steps of the recurrent (decode) form of the linear-attention
// kernels, one pass over the d_k × d_v state each (Highway, run-time
// dispatch). `row_decay` null means every row decays by `decay`.
#pragma once

#include <cstdint>

namespace seqrt::cpu {

// S_i ·= d_i for every row, then u = Σ_i k_i S_i (u: dv values).
void decay_and_read_keys(const float* row_decay, float decay, const float* k,
                         int64_t dk, int64_t dv, float* state, float* u);

// S_i = d_i S_i + k_i w for every row, and y = α Σ_i q_i S_i (new state).
void decay_update_read(const float* row_decay, float decay, const float* k,
                       const float* w, const float* q, float alpha, int64_t dk,
                       int64_t dv, float* state, float* y);

}  // namespace seqrt::cpu
