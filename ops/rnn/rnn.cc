// RNN (ONNX 14): the simple recurrence
//   H_t = f(X_t·Wᵀ + H_{t-1}·Rᵀ + Wb + Rb),  f = Tanh by default.
// W (dirs, hidden, input), R (dirs, hidden, hidden), B (dirs, 2·hidden).
// Directions, layout, sequence_lens, clip and activations: rnn_common.h.
#include "ops/registry.h"
#include "ops/rnn/rnn_common.h"

namespace seqrt {
namespace {

double dot(const double* a, const double* b, int64_t n) {
  double sum = 0.0;
  for (int64_t k = 0; k < n; ++k) sum += a[k] * b[k];
  return sum;
}

void rnn_cell(const RnnConfig& config, int64_t dir, const RnnCellWeights& w,
              const double* x, double* h, double*) {
  const int64_t n = w.hidden;
  std::vector<double> next(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j) {
    double a = w.wb[j] + w.rb[j] + dot(x, w.w + j * w.input, w.input) +
               dot(h, w.r + j * n, n);
    next[static_cast<size_t>(j)] =
        config.act(dir, 0).apply(rnn_clip(config, a));
  }
  std::copy(next.begin(), next.end(), h);
}

Status infer(InferContext& ctx) { return infer_rnn(ctx, RnnKind::kRnn); }
Status run(KernelContext& ctx) {
  return run_rnn_reference(ctx, RnnKind::kRnn, rnn_cell);
}

}  // namespace

void register_rnn(OpRegistry& registry) {
  OpSchema s = rnn_schema(
      "RNN", "simple recurrence H = f(X·Wᵀ + H·Rᵀ + b) over a sequence",
      RnnKind::kRnn);
  s.infer = infer;
  s.reference = run;
  register_or_die(registry, std::move(s));
}

}  // namespace seqrt
