// Pieces shared by the ONNX recurrent ops RNN, GRU and LSTM and their
// backend kernels: the attributes read once into an RnnConfig (directions,
// layout, clip, the activation list with its alpha/beta), one shape check
// that inference (symbolic dims) and kernels (concrete dims) both use, and
// the reference driver that runs a per-op cell over directions, batches
// and steps in double.
//
// Semantics common to the three (ONNX opset 14):
// - layout 0: X (seq, batch, input), Y (seq, dirs, batch, hidden),
//   Y_h/Y_c and initial_h/initial_c (dirs, batch, hidden); layout 1: X
//   (batch, seq, input), Y (batch, seq, dirs, hidden), states (batch, dirs,
//   hidden).
// - sequence_lens (batch) gives each batch its length; Y is zero past it,
//   Y_h/Y_c hold the state after the batch's last valid step (zero for
//   length 0, as in ONNX Runtime). The reverse direction runs from step len-1
//   down to 0 and writes each output at its own time position.
// - clip bounds the input of every gate activation to [-clip, clip] (LSTM:
//   not the cell state going into h, as in ONNX Runtime).
// - activation_alpha/beta are consumed in the order of `activations`, each
//   activation taking as many as it uses (Affine, ScaledTanh and
//   HardSigmoid two, LeakyRelu, ThresholdedRelu and Elu one of alpha);
//   missing values take the ONNX operator defaults. For bidirectional ops
//   a list of one direction's activations serves both.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ops/op_context.h"
#include "ops/op_schema.h"
#include "ops/rnn/rnn_activation_fn.h"

namespace seqrt {

enum class RnnKind { kRnn, kGru, kLstm };

// Input and output positions (LSTM has all; GRU and RNN stop at 5 / 1).
enum RnnInput {
  kRnnX,
  kRnnW,
  kRnnR,
  kRnnB,
  kRnnSequenceLens,
  kRnnInitialH,
  kRnnInitialC,
  kRnnP
};
enum RnnOutput { kRnnY, kRnnYh, kRnnYc };

struct RnnActivation {
  using Fn = RnnActivationFn;
  Fn fn = Fn::kSigmoid;
  float alpha = 0.0f;
  float beta = 0.0f;

  double apply(double x) const;
  float apply(float x) const;
};

struct RnnConfig {
  RnnKind kind = RnnKind::kRnn;
  int64_t gates = 1;       // weight blocks: RNN 1, GRU 3, LSTM 4
  int64_t directions = 1;  // 2 when bidirectional
  bool reverse = false;    // direction == "reverse"
  int64_t layout = 0;
  bool has_clip = false;
  float clip = 0.0f;
  bool input_forget = false;         // LSTM
  bool linear_before_reset = false;  // GRU
  int64_t hidden = -1;               // from hidden_size, when set
  // Per direction, the op's activation slots (RNN: f; GRU: f, g; LSTM: f,
  // g, h), directions × slots entries.
  std::vector<RnnActivation> activations;

  int64_t slots() const {
    return static_cast<int64_t>(activations.size()) / directions;
  }
  const RnnActivation& act(int64_t dir, int64_t slot) const {
    return activations[static_cast<size_t>(dir * slots() + slot)];
  }
  // Whether direction `dir` (0 or 1) runs backwards in time.
  bool backwards(int64_t dir) const { return reverse || dir == 1; }
  // The node's input slots this op has (RNN/GRU 6, LSTM 8).
  size_t num_inputs() const { return kind == RnnKind::kLstm ? 8 : 6; }
};

// Reads and validates the attributes (direction, layout, clip, the
// activation names and their alpha/beta).
Result<RnnConfig> rnn_config(const OpContext& ctx, RnnKind kind);

struct RnnDims {
  int64_t seq, batch, input, hidden, directions;
};

// Shared by inference and kernels: checks every present input's shape and
// dtype and sets the outputs' types.
Status infer_rnn(InferContext& ctx, RnnKind kind);

// The concrete sizes of a kernel's inputs, checked as inference does; also
// checks that sequence_lens values lie in [0, seq].
Result<RnnDims> check_rnn(const KernelContext& ctx, const RnnConfig& config);

// Per-batch lengths (seq for every batch without sequence_lens).
std::vector<int64_t> rnn_sequence_lengths(const KernelContext& ctx,
                                          const RnnDims& dims);

// Output dims for the op's layout.
std::vector<int64_t> rnn_y_dims(const RnnConfig& config, const RnnDims& dims);
std::vector<int64_t> rnn_state_dims(const RnnConfig& config,
                                    const RnnDims& dims);
// Element offsets of X row (t, b) and of state/Y rows, by layout.
inline int64_t rnn_x_row(const RnnConfig& c, const RnnDims& d, int64_t t,
                         int64_t b) {
  return c.layout == 0 ? t * d.batch + b : b * d.seq + t;
}
inline int64_t rnn_y_row(const RnnConfig& c, const RnnDims& d, int64_t t,
                         int64_t dir, int64_t b) {
  return c.layout == 0 ? (t * d.directions + dir) * d.batch + b
                       : (b * d.seq + t) * d.directions + dir;
}
inline int64_t rnn_state_row(const RnnConfig& c, const RnnDims& d, int64_t dir,
                             int64_t b) {
  return c.layout == 0 ? dir * d.batch + b : b * d.directions + dir;
}

// One direction's weights for a reference cell, in double.
struct RnnCellWeights {
  const double* w;   // (gates*hidden, input)
  const double* r;   // (gates*hidden, hidden)
  const double* wb;  // (gates*hidden), zeros without B
  const double* rb;  // (gates*hidden)
  const double* p;   // LSTM peepholes (3*hidden), zeros without P
  int64_t input, hidden;
};

// One step of one batch row: updates h (and c, LSTM) from x in place.
using RnnCellFn = void (*)(const RnnConfig& config, int64_t dir,
                           const RnnCellWeights& weights, const double* x,
                           double* h, double* c);

// The reference kernel of every recurrent op: runs `cell` over directions,
// batch rows and steps and writes Y, Y_h (and Y_c) where the node has them.
Status run_rnn_reference(KernelContext& ctx, RnnKind kind, RnnCellFn cell);

// Clips to [-clip, clip] when the config has a clip.
inline double rnn_clip(const RnnConfig& c, double x) {
  if (!c.has_clip) return x;
  return x < -c.clip ? -c.clip : (x > c.clip ? c.clip : x);
}

// The attributes every recurrent op has (LSTM and GRU add one each).
std::vector<AttrSpec> rnn_common_attrs();

// The schema the three ops share: inputs X, W, R, B, sequence_lens,
// initial_h (LSTM: + initial_c, P), outputs Y, Y_h (LSTM: + Y_c), the
// common attributes; each op adds its own attributes and functions.
OpSchema rnn_schema(const char* name, const char* doc, RnnKind kind);

}  // namespace seqrt
