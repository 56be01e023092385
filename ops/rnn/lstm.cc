// LSTM (ONNX 14), gates i (input), o (output), f (forget), c (cell):
//   i = f(X·Wiᵀ + H·Riᵀ + Pi ⊙ C + Wbi + Rbi)
//   f = f(X·Wfᵀ + H·Rfᵀ + Pf ⊙ C + Wbf + Rbf)     (1 - i with input_forget)
//   c = g(X·Wcᵀ + H·Rcᵀ + Wbc + Rbc)
//   C' = f ⊙ C + i ⊙ c
//   o = f(X·Woᵀ + H·Roᵀ + Po ⊙ C' + Wbo + Rbo)
//   H' = o ⊙ h(C')
// f = Sigmoid, g = h = Tanh by default; clip bounds the gates' inputs to
// f and g, not C' on its way into h (as ONNX Runtime does). W (dirs, 4·hidden,
// input) in gate order i, o, f, c; R (dirs, 4·hidden, hidden); B (dirs,
// 8·hidden); P (dirs, 3·hidden) in order i, o, f. Directions, layout,
// sequence_lens, clip and activations: rnn_common.h.
#include "ops/registry.h"
#include "ops/rnn/rnn_common.h"

namespace seqrt {
namespace {

double dot(const double* a, const double* b, int64_t n) {
  double sum = 0.0;
  for (int64_t k = 0; k < n; ++k) sum += a[k] * b[k];
  return sum;
}

void lstm_cell(const RnnConfig& config, int64_t dir, const RnnCellWeights& w,
               const double* x, double* h, double* c) {
  const int64_t n = w.hidden;
  const RnnActivation& f = config.act(dir, 0);
  const RnnActivation& g = config.act(dir, 1);
  const RnnActivation& hact = config.act(dir, 2);
  std::vector<double> next_h(static_cast<size_t>(n)), next_c(next_h.size());
  for (int64_t j = 0; j < n; ++j) {
    double pre[4];
    for (int64_t k = 0; k < 4; ++k) {
      int64_t row = k * n + j;
      pre[k] = dot(x, w.w + row * w.input, w.input) + dot(h, w.r + row * n, n) +
               w.wb[row] + w.rb[row];
    }
    const double* p = w.p;
    double in = f.apply(rnn_clip(config, pre[0] + p[j] * c[j]));
    double forget =
        config.input_forget
            ? 1.0 - in
            : f.apply(rnn_clip(config, pre[2] + p[2 * n + j] * c[j]));
    double cell = g.apply(rnn_clip(config, pre[3]));
    double c_new = forget * c[j] + in * cell;
    double out = f.apply(rnn_clip(config, pre[1] + p[n + j] * c_new));
    next_c[static_cast<size_t>(j)] = c_new;
    next_h[static_cast<size_t>(j)] = out * hact.apply(c_new);
  }
  std::copy(next_h.begin(), next_h.end(), h);
  std::copy(next_c.begin(), next_c.end(), c);
}

Status infer(InferContext& ctx) { return infer_rnn(ctx, RnnKind::kLstm); }
Status run(KernelContext& ctx) {
  return run_rnn_reference(ctx, RnnKind::kLstm, lstm_cell);
}

}  // namespace

void register_lstm(OpRegistry& registry) {
  OpSchema s = rnn_schema(
      "LSTM", "long short-term memory over a sequence, with optional peepholes",
      RnnKind::kLstm);
  s.attrs.push_back({"input_forget", AttrType::kInt, Attribute(int64_t{0})});
  s.infer = infer;
  s.reference = run;
  register_or_die(registry, std::move(s));
}

}  // namespace seqrt
