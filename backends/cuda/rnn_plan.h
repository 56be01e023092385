// The CUDA kernels of RNN, GRU and LSTM (ops/rnn/) as host/device code: the
// per-unit step each warp of kernels/rnn.cu runs, the activations, the
// index maps of both layouts and the scratch layout. Compiled for the host
// too, so rnn_plan_test runs exactly this step over a whole sequence (with
// a plain loop for the warp's dot product) against the reference kernel.
//
// Device design (kernels/rnn.cu): X·Wᵀ for every step and direction is one
// cuBLASLt GEMM per direction up front; the recurrence is then one kernel
// launch per step (GRU without linear_before_reset: two, since its
// candidate needs r ⊙ h of every unit). Step t+1 needs all of step t's h,
// a grid-wide dependency: the launch boundary is that barrier, which a
// persistent kernel would have to rebuild with grid synchronisation and
// co-resident blocks. A warp owns one (direction, batch row, hidden unit):
// its lanes read the unit's rows of R coalesced, a shuffle reduction gives
// every lane the dot products, and lane 0 writes h (double-buffered), c,
// and Y at the step's time position.
#pragma once

#include <cmath>
#include <cstdint>

#include "backends/cuda/copy_plan.h"
#include "ops/rnn/rnn_activation_fn.h"

namespace seqrt {
struct RnnConfig;  // ops/rnn/rnn_common.h
}  // namespace seqrt

namespace seqrt::cuda {

struct RnnAct {
  RnnActivationFn fn = RnnActivationFn::kSigmoid;
  float alpha = 0.0f, beta = 0.0f;
};

enum class RnnCellKind : int { kRnn, kGru, kLstm };

// The node's attributes as the kernels read them (from RnnConfig).
struct RnnCell {
  RnnCellKind kind = RnnCellKind::kRnn;
  int gates = 1;
  int directions = 1;
  bool reverse = false;
  int layout = 0;
  bool has_clip = false;
  float clip = 0.0f;
  bool input_forget = false;
  bool linear_before_reset = false;
  RnnAct act[2][3];  // [direction][slot]
};

// The same arithmetic as RnnActivation::apply(float).
SEQRT_HOST_DEVICE inline float rnn_activate(const RnnAct& a, float x) {
  switch (a.fn) {
    case RnnActivationFn::kRelu:
      return x > 0.0f ? x : 0.0f;
    case RnnActivationFn::kTanh:
      return tanhf(x);
    case RnnActivationFn::kSigmoid:
      return 1.0f / (1.0f + expf(-x));
    case RnnActivationFn::kAffine:
      return a.alpha * x + a.beta;
    case RnnActivationFn::kLeakyRelu:
      return x >= 0.0f ? x : a.alpha * x;
    case RnnActivationFn::kThresholdedRelu:
      return x > a.alpha ? x : 0.0f;
    case RnnActivationFn::kScaledTanh:
      return a.alpha * tanhf(a.beta * x);
    case RnnActivationFn::kHardSigmoid: {
      const float v = a.alpha * x + a.beta;
      return v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v);
    }
    case RnnActivationFn::kElu:
      return x >= 0.0f ? x : a.alpha * (expf(x) - 1.0f);
    case RnnActivationFn::kSoftsign:
      return x / (1.0f + fabsf(x));
    case RnnActivationFn::kSoftplus:
      return x > 0.0f ? x + log1pf(expf(-x)) : log1pf(expf(x));
  }
  return x;
}

// Activation `slot` of direction `dir` applied to a clipped gate input.
SEQRT_HOST_DEVICE inline float rnn_gate(const RnnCell& c, int dir, int slot,
                                        float x) {
  if (c.has_clip) x = x < -c.clip ? -c.clip : (x > c.clip ? c.clip : x);
  return rnn_activate(c.act[dir][slot], x);
}

// Pointers and sizes of one node's recurrence. State buffers are
// (directions, batch, hidden) whatever the layout; xw is (directions, rows
// of X in X's order, gates·hidden).
struct RnnStepArgs {
  RnnCell cell;
  int64_t seq = 0, batch = 0, hidden = 0;
  const int64_t* lens = nullptr;  // (batch), each in [0, seq]
  const float* xw = nullptr;
  const float* r = nullptr;     // (directions, gates·hidden, hidden)
  const float* bias = nullptr;  // (directions, 2·gates·hidden) or null
  const float* peep = nullptr;  // (directions, 3·hidden) or null
  const float* h_prev = nullptr;
  float* h_next = nullptr;
  float* c = nullptr;   // LSTM, updated in place
  float* z = nullptr;   // GRU without linear_before_reset: z between phases
  float* rh = nullptr;  // and r ⊙ h
  float* y = nullptr;   // Y in the node's layout, or null
};

// Element rows of X (t, b), Y (t, dir, b) and a state (dir, b) by layout,
// as rnn_x_row / rnn_y_row / rnn_state_row (ops/rnn/rnn_common.h).
SEQRT_HOST_DEVICE inline int64_t rnn_x_index(const RnnCell& c, int64_t seq,
                                             int64_t batch, int64_t t,
                                             int64_t b) {
  return c.layout == 0 ? t * batch + b : b * seq + t;
}
SEQRT_HOST_DEVICE inline int64_t rnn_y_index(const RnnCell& c, int64_t seq,
                                             int64_t batch, int64_t t,
                                             int64_t dir, int64_t b) {
  return c.layout == 0 ? (t * c.directions + dir) * batch + b
                       : (b * seq + t) * c.directions + dir;
}
SEQRT_HOST_DEVICE inline int64_t rnn_state_index(const RnnCell& c,
                                                 int64_t batch, int64_t dir,
                                                 int64_t b) {
  return c.layout == 0 ? dir * batch + b : b * c.directions + dir;
}

// Launches of step s: 2 for GRU without linear_before_reset, else 1.
SEQRT_HOST_DEVICE inline int rnn_phases(const RnnCell& c) {
  return c.kind == RnnCellKind::kGru && !c.linear_before_reset ? 2 : 1;
}

// Step s (0-based, in the direction's own order), phase `phase`, of unit u
// (direction, batch row, hidden unit). `dot(h, row)` is Σ_k h[k]·row[k]
// over hidden and must give every caller of the unit the same value (the
// warp's reduction); only the `leader` writes.
template <typename Dot>
SEQRT_HOST_DEVICE inline void rnn_unit_step(const RnnStepArgs& a, int64_t u,
                                            int64_t s, int phase, Dot dot,
                                            bool leader) {
  const RnnCell& cell = a.cell;
  const int64_t H = a.hidden, gh = cell.gates * H;
  const int64_t j = u % H, b = (u / H) % a.batch, dir = u / (H * a.batch);
  const int d = static_cast<int>(dir);
  const int64_t at = (dir * a.batch + b) * H;
  const float* hp = a.h_prev + at;
  const int64_t len = a.lens[b];
  if (s >= len) {  // past the row's length: the state is kept
    if (leader && phase == rnn_phases(cell) - 1) a.h_next[at + j] = hp[j];
    return;
  }
  const bool backwards = cell.reverse || dir == 1;
  const int64_t t = backwards ? len - 1 - s : s;
  const float* xw =
      a.xw +
      (dir * a.seq * a.batch + rnn_x_index(cell, a.seq, a.batch, t, b)) * gh;
  const float* wb = a.bias != nullptr ? a.bias + dir * 2 * gh : nullptr;
  const float* r = a.r + dir * gh * H;
  // X·Wᵀ + Wb of gate k, and Rb apart (GRU's r multiplies it).
  auto x_in = [&](int k) {
    return xw[k * H + j] + (wb != nullptr ? wb[k * H + j] : 0.0f);
  };
  auto rb = [&](int k) { return wb != nullptr ? wb[gh + k * H + j] : 0.0f; };
  auto r_row = [&](int k) { return r + (k * H + j) * H; };
  float h = 0.0f;
  if (cell.kind == RnnCellKind::kRnn) {
    h = rnn_gate(cell, d, 0, x_in(0) + rb(0) + dot(hp, r_row(0)));
  } else if (cell.kind == RnnCellKind::kLstm) {
    // Only the leader writes c, after reading it; the other lanes' results
    // are dropped, so which c they read does not matter.
    const float c_prev = a.c[at + j];
    float pre[4];
    for (int k = 0; k < 4; ++k) pre[k] = x_in(k) + rb(k) + dot(hp, r_row(k));
    const float* p = a.peep != nullptr ? a.peep + dir * 3 * H : nullptr;
    auto peep = [&](int k, float cv) {
      return p != nullptr ? p[k * H + j] * cv : 0.0f;
    };
    const float in = rnn_gate(cell, d, 0, pre[0] + peep(0, c_prev));
    const float forget = cell.input_forget
                             ? 1.0f - in
                             : rnn_gate(cell, d, 0, pre[2] + peep(2, c_prev));
    const float cand = rnn_gate(cell, d, 1, pre[3]);
    const float c_new = forget * c_prev + in * cand;
    const float out = rnn_gate(cell, d, 0, pre[1] + peep(1, c_new));
    h = out * rnn_activate(cell.act[d][2], c_new);
    if (leader) a.c[at + j] = c_new;
  } else if (phase == 0) {
    const float z = rnn_gate(cell, d, 0, x_in(0) + rb(0) + dot(hp, r_row(0)));
    const float rg = rnn_gate(cell, d, 0, x_in(1) + rb(1) + dot(hp, r_row(1)));
    if (!cell.linear_before_reset) {
      if (leader) {
        a.z[at + j] = z;
        a.rh[at + j] = rg * hp[j];
      }
      return;
    }
    const float cand =
        rnn_gate(cell, d, 1, x_in(2) + rg * (dot(hp, r_row(2)) + rb(2)));
    h = (1.0f - z) * cand + z * hp[j];
  } else {
    const float z = a.z[at + j];
    const float cand =
        rnn_gate(cell, d, 1, x_in(2) + dot(a.rh + at, r_row(2)) + rb(2));
    h = (1.0f - z) * cand + z * hp[j];
  }
  if (!leader) return;
  a.h_next[at + j] = h;
  if (a.y != nullptr) {
    a.y[rnn_y_index(cell, a.seq, a.batch, t, dir, b) * H + j] = h;
  }
}

// The config read once by the op's own rnn_config, as the kernels take it.
RnnCell rnn_cell_from_config(const RnnConfig& config);

// Element i of the (directions, batch, hidden) state: h (and c when not
// null) from initial_h / initial_c in the node's layout, zero where absent.
SEQRT_HOST_DEVICE inline void rnn_init_state_element(
    const RnnCell& cell, int64_t batch, int64_t hidden, int64_t i,
    const float* initial_h, const float* initial_c, float* h, float* c) {
  const int64_t j = i % hidden, b = (i / hidden) % batch;
  const int64_t from =
      rnn_state_index(cell, batch, i / (hidden * batch), b) * hidden + j;
  h[i] = initial_h != nullptr ? initial_h[from] : 0.0f;
  if (c != nullptr) c[i] = initial_c != nullptr ? initial_c[from] : 0.0f;
}

// Element i of the final state into Y_h / Y_c (either may be null) in the
// node's layout; a row of length 0 leaves them zero (rnn_common.h).
SEQRT_HOST_DEVICE inline void rnn_store_state_element(
    const RnnCell& cell, int64_t batch, int64_t hidden, int64_t i,
    const int64_t* lens, const float* h, const float* c, float* y_h,
    float* y_c) {
  const int64_t j = i % hidden, b = (i / hidden) % batch;
  if (lens[b] == 0) return;
  const int64_t to =
      rnn_state_index(cell, batch, i / (hidden * batch), b) * hidden + j;
  if (y_h != nullptr) y_h[to] = h[i];
  if (y_c != nullptr) y_c[to] = c[i];
}

// Where each piece of the node's scratch block starts, in floats, each on
// a 256-byte boundary (the lengths are int64, two floats each; c is LSTM's,
// z and rh GRU's two-phase step's, empty otherwise), and its total size.
struct RnnScratch {
  int64_t lens = 0, xw = 0, h0 = 0, h1 = 0, c = 0, z = 0, rh = 0;
  int64_t total = 0;
};
RnnScratch plan_rnn_scratch(const RnnCell& cell, int64_t seq, int64_t batch,
                            int64_t hidden);

// Blocks of `threads` (a multiple of 32) for one warp per unit, capped at
// kMaxRnnBlocks (the kernels loop over units); 0 when there are none.
inline constexpr int64_t kMaxRnnBlocks = 65535;
int64_t rnn_warp_blocks(int64_t units, int threads);
// Blocks of `threads` for one thread per element, capped likewise.
int64_t rnn_element_blocks(int64_t elements, int threads);

}  // namespace seqrt::cuda
