// GRU (ONNX 14), gates z (update), r (reset), h (candidate):
//   z = f(X·Wzᵀ + H·Rzᵀ + Wbz + Rbz)
//   r = f(X·Wrᵀ + H·Rrᵀ + Wbr + Rbr)
//   h = g(X·Whᵀ + (r ⊙ H)·Rhᵀ + Rbh + Wbh)       linear_before_reset = 0
//   h = g(X·Whᵀ + r ⊙ (H·Rhᵀ + Rbh) + Wbh)       linear_before_reset ≠ 0
//   H' = (1 - z) ⊙ h + z ⊙ H
// f = Sigmoid, g = Tanh by default. W (dirs, 3·hidden, input) in gate
// order z, r, h; R (dirs, 3·hidden, hidden); B (dirs, 6·hidden).
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

void gru_cell(const RnnConfig& config, int64_t dir, const RnnCellWeights& w,
              const double* x, double* h, double*) {
  const int64_t n = w.hidden;
  const RnnActivation& f = config.act(dir, 0);
  const RnnActivation& g = config.act(dir, 1);
  std::vector<double> z(static_cast<size_t>(n)), r(z.size()), rh(z.size());
  // Row j of gate k in W, R and the biases.
  auto pre = [&](int64_t k, int64_t j, const double* hv) {
    int64_t row = k * n + j;
    return dot(x, w.w + row * w.input, w.input) + dot(hv, w.r + row * n, n) +
           w.wb[row] + w.rb[row];
  };
  for (int64_t j = 0; j < n; ++j) {
    size_t u = static_cast<size_t>(j);
    z[u] = f.apply(rnn_clip(config, pre(0, j, h)));
    r[u] = f.apply(rnn_clip(config, pre(1, j, h)));
    rh[u] = r[u] * h[j];
  }
  std::vector<double> next(z.size());
  for (int64_t j = 0; j < n; ++j) {
    size_t u = static_cast<size_t>(j);
    int64_t row = 2 * n + j;
    double xw = dot(x, w.w + row * w.input, w.input) + w.wb[row];
    double a = config.linear_before_reset
                   ? xw + r[u] * (dot(h, w.r + row * n, n) + w.rb[row])
                   : xw + dot(rh.data(), w.r + row * n, n) + w.rb[row];
    double cand = g.apply(rnn_clip(config, a));
    next[u] = (1.0 - z[u]) * cand + z[u] * h[j];
  }
  std::copy(next.begin(), next.end(), h);
}

Status infer(InferContext& ctx) { return infer_rnn(ctx, RnnKind::kGru); }
Status run(KernelContext& ctx) {
  return run_rnn_reference(ctx, RnnKind::kGru, gru_cell);
}

}  // namespace

void register_gru(OpRegistry& registry) {
  OpSchema s =
      rnn_schema("GRU", "gated recurrent unit over a sequence", RnnKind::kGru);
  s.attrs.push_back(
      {"linear_before_reset", AttrType::kInt, Attribute(int64_t{0})});
  s.infer = infer;
  s.reference = run;
  register_or_die(registry, std::move(s));
}

}  // namespace seqrt
