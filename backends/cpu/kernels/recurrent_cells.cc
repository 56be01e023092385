#include "backends/cpu/kernels/recurrent_cells.h"

#include <algorithm>

#include "backends/cpu/simd/vec.h"

namespace seqrt::cpu {

void apply_rnn_activation(const RnnConfig& config, const RnnActivation& act,
                          float* x, size_t n) {
  if (config.has_clip) {
    const float lo = -config.clip, hi = config.clip;
    for (size_t j = 0; j < n; ++j) x[j] = std::min(std::max(x[j], lo), hi);
  }
  apply_activation(act, x, n);
}

void apply_activation(const RnnActivation& act, float* x, size_t n) {
  switch (act.fn) {
    case RnnActivation::Fn::kSigmoid:
      sigmoid_inplace(x, n);
      return;
    case RnnActivation::Fn::kTanh:
      tanh_inplace(x, n);
      return;
    default:
      for (size_t j = 0; j < n; ++j) x[j] = act.apply(x[j]);
  }
}

void lstm_block(const RnnConfig& config, int64_t dir, const LstmBlock& b,
                size_t n) {
  const RnnActivation& f_act = config.act(dir, 0);
  const RnnActivation& g_act = config.act(dir, 1);
  const RnnActivation& h_act = config.act(dir, 2);
  const float* p_i = b.peep;
  const float* p_o = b.peep ? b.peep + b.peep_stride : nullptr;
  const float* p_f = b.peep ? b.peep + 2 * b.peep_stride : nullptr;
  if (p_i) {
    for (size_t j = 0; j < n; ++j) {
      b.i[j] += p_i[j] * b.c[j];
      b.f[j] += p_f[j] * b.c[j];
    }
  }
  apply_rnn_activation(config, f_act, b.i, n);
  if (config.input_forget) {
    for (size_t j = 0; j < n; ++j) b.f[j] = 1.0f - b.i[j];
  } else {
    apply_rnn_activation(config, f_act, b.f, n);
  }
  apply_rnn_activation(config, g_act, b.g, n);
  for (size_t j = 0; j < n; ++j) b.c[j] = b.f[j] * b.c[j] + b.i[j] * b.g[j];
  if (p_o) {
    for (size_t j = 0; j < n; ++j) b.o[j] += p_o[j] * b.c[j];
  }
  apply_rnn_activation(config, f_act, b.o, n);
  std::copy(b.c, b.c + n, b.scratch);
  apply_activation(h_act, b.scratch, n);  // C is not clipped
  for (size_t j = 0; j < n; ++j) b.h[j] = b.o[j] * b.scratch[j];
}

void gru_update_reset(const RnnConfig& config, int64_t dir, float* z, float* r,
                      size_t n) {
  apply_rnn_activation(config, config.act(dir, 0), z, n);
  apply_rnn_activation(config, config.act(dir, 0), r, n);
}

void gru_output(const RnnConfig& config, int64_t dir, const float* z,
                float* cand, const float* h_prev, float* h, size_t n) {
  apply_rnn_activation(config, config.act(dir, 1), cand, n);
  for (size_t j = 0; j < n; ++j) {
    h[j] = (1.0f - z[j]) * cand[j] + z[j] * h_prev[j];
  }
}

}  // namespace seqrt::cpu
