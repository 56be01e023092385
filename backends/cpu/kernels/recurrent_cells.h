// Gate math of the recurrent ops (ops/rnn/) for one batch row and a block
// of hidden units [j0, j0 + n), in f32, on the pre-activations the driver
// (recurrent.cc) gathered from X·Wᵀ and h·Rᵀ. Sigmoid and Tanh, the
// activations almost every model uses, run vectorised (simd/vec.h).
#pragma once

#include <cstddef>

#include "ops/rnn/rnn_common.h"

namespace seqrt::cpu {

// x = act(clip(x)) over n elements.
void apply_rnn_activation(const RnnConfig& config, const RnnActivation& act,
                          float* x, size_t n);
// x = act(x), unclipped.
void apply_activation(const RnnActivation& act, float* x, size_t n);

// One row's block of an LSTM step. The four gate arrays hold the
// pre-activations on entry (X·Wᵀ + h·Rᵀ + biases) and are scratch after.
struct LstmBlock {
  float* i;
  float* o;
  float* f;
  float* g;
  float* scratch;      // n floats
  const float* peep;   // this direction's P (3·hidden) offset by j0, or null
  size_t peep_stride;  // hidden: distance between P's i, o and f parts
  float* c;            // in: C_{t-1}; out: C_t
  float* h;            // out: H_t
};
void lstm_block(const RnnConfig& config, int64_t dir, const LstmBlock& b,
                size_t n);

// The GRU gates z and r from their pre-activations, in place.
void gru_update_reset(const RnnConfig& config, int64_t dir, float* z, float* r,
                      size_t n);
// H_t = (1 - z) ⊙ g(cand) + z ⊙ H_{t-1}; `cand` is the candidate's
// pre-activation on entry and scratch after.
void gru_output(const RnnConfig& config, int64_t dir, const float* z,
                float* cand, const float* h_prev, float* h, size_t n);

}  // namespace seqrt::cpu
