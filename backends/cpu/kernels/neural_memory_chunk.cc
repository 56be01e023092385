// The chunk-parallel form of seqrt::NeuralMemory for one (batch, head).
//
// Within a segment of n tokens that share the anchor A (the weights at the
// start of their chunk), every gradient is taken at A, so all of them come
// from a few matrix products. With M0, S0 the weights and momentum before
// the segment, the recurrences S_i = η_i S_{i−1} − θ_i G_i and
// M_i = (1 − α_i) M_{i−1} + S_i unroll to
//   S_i = s_i S0 − Σ_{j≤i} e_ij G_j,   M_i = β_i M0 + c_i S0 − Σ_{j≤i} w_ij G_j
// with scalar coefficients from the gates alone. Each G_j is an outer
// product (k_jᵀ δ_j for W1, a_jᵀ r_j for W2), so M_i(q_i) needs no per-token
// weights: q_i·W1_i = β_i q_i M0 + c_i q_i S0 − Σ_j w_ij (q_i·k_j) δ_j, and the
// same for the second layer with the retrieval activations. Weights are only
// formed at the segment's end.
#include <algorithm>
#include <cmath>

#include "backends/cpu/kernels/neural_memory.h"
#include "backends/cpu/simd/gemm.h"
#include "backends/cpu/simd/vec.h"

namespace seqrt::cpu {
namespace {

// Coefficients of one segment (indices relative to its first token).
struct SegmentCoeffs {
  double beta_end = 1, c_end = 0, s_end = 1;  // of M0 and S0 after the end
};

// Fills, for n tokens with gates θ, η, α:
//   scratch.weights (n×n): the retrieval weights of G_j for token i — w_ij
//     (after_update) or w_{i−1,j} (before_update), zero above the diagonal;
//   scratch.row_coeffs: [0,n) retrieval β, [n,2n) retrieval c,
//     [2n,3n) w_{n−1,j} (weights at the end), [3n,4n) e_{n−1,j} (momentum).
SegmentCoeffs segment_coefficients(const float* theta, const float* eta,
                                   const float* alpha, int64_t n,
                                   bool retrieve_before,
                                   NeuralMemoryScratch& scratch) {
  std::vector<double>& w = scratch.weights;
  std::vector<double>& e = scratch.momentum;  // one row, reused
  std::vector<double>& row = scratch.row_coeffs;
  std::fill(w.begin(), w.begin() + n * n, 0.0);
  std::fill(e.begin(), e.begin() + n, 0.0);
  std::vector<double> prev(n, 0.0), cur(n, 0.0);  // w_{i−1,·}, w_{i,·}
  double beta = 1, c = 0, s = 1;
  for (int64_t i = 0; i < n; ++i) {
    double keep = 1.0 - alpha[i];
    if (retrieve_before) {
      row[i] = beta;
      row[n + i] = c;
      std::copy_n(prev.data(), i, w.data() + i * n);
    }
    for (int64_t j = 0; j < i; ++j) e[j] *= eta[i];
    e[i] = theta[i];
    for (int64_t j = 0; j <= i; ++j) cur[j] = keep * prev[j] + e[j];
    s *= eta[i];
    beta *= keep;
    c = keep * c + s;
    if (!retrieve_before) {
      row[i] = beta;
      row[n + i] = c;
      std::copy_n(cur.data(), i + 1, w.data() + i * n);
    }
    std::swap(prev, cur);
  }
  std::copy_n(prev.data(), n, row.data() + 2 * n);
  std::copy_n(e.data(), n, row.data() + 3 * n);
  return SegmentCoeffs{beta, c, s};
}

// out (n×cols) = diag(coef) · in.
void scale_rows(const float* in, const double* coef, int64_t n, int64_t cols,
                float* out) {
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      out[i * cols + j] = static_cast<float>(coef[i]) * in[i * cols + j];
    }
  }
}

// scores (n×n) = weights ⊙ (x · zᵀ), x (n×width), z (n×width).
void weighted_scores(const float* x, const float* z, int64_t n, int64_t width,
                     const std::vector<double>& weights, float* scores) {
  sgemm(false, true, n, n, width, 1.0f, x, width, z, width, 0.0f, scores, n);
  for (int64_t i = 0; i < n * n; ++i) {
    scores[i] *= static_cast<float>(weights[i]);
  }
}

// out (n×cols) = diag(β) x·W0 + diag(c) x·S0 − scores·grad_rows, where W0,
// S0 are (width×cols) and grad_rows (n×cols) the gradients' right factors.
void retrieve_layer(const float* x, int64_t n, int64_t width, int64_t cols,
                    const float* w0, const float* s0, const float* scores,
                    const float* grad_rows, const double* row_coeffs,
                    float* part, float* out) {
  sgemm(false, false, n, cols, width, 1.0f, x, width, w0, cols, 0.0f, out,
        cols);
  sgemm(false, false, n, cols, width, 1.0f, x, width, s0, cols, 0.0f, part,
        cols);
  for (int64_t i = 0; i < n; ++i) {
    scale(static_cast<float>(row_coeffs[i]), out + i * cols, cols);
    axpy(static_cast<float>(row_coeffs[n + i]), part + i * cols, out + i * cols,
         cols);
  }
  sgemm(false, false, n, cols, n, -1.0f, scores, n, grad_rows, cols, 1.0f, out,
        cols);
}

// One layer's end-of-segment update: W ← β W + c S − leftᵀ diag(w_end) right,
// S ← s S − leftᵀ diag(e_end) right; W, S (rows×cols), left (n×rows),
// right (n×cols).
void update_layer(const float* left, const float* right, int64_t n,
                  int64_t rows, int64_t cols, const SegmentCoeffs& k,
                  const double* row_coeffs, float* part, float* w, float* s) {
  int64_t size = rows * cols;
  scale(static_cast<float>(k.beta_end), w, size);
  axpy(static_cast<float>(k.c_end), s, w, size);
  scale_rows(right, row_coeffs + 2 * n, n, cols, part);
  sgemm(true, false, rows, cols, n, -1.0f, left, rows, part, cols, 1.0f, w,
        cols);
  scale_rows(right, row_coeffs + 3 * n, n, cols, part);
  sgemm(true, false, rows, cols, n, -1.0f, left, rows, part, cols,
        static_cast<float>(k.s_end), s, cols);
}

// Tokens [t, t + n) of one head, all in one chunk, anchor already set.
void run_segment(const NeuralMemoryDims& dims, const NeuralMemoryHead& head,
                 int64_t t, int64_t n, NeuralMemoryScratch& sc) {
  const int64_t d = dims.d, m = dims.m, p_count = dims.params();
  const float* q = head.q + t * d;
  const float* k = head.k + t * d;
  const float* v = head.v + t * d;
  float* y = head.y + t * d;
  float* w = head.state;
  float* s = w + p_count;
  const float* anchor = s + p_count;
  SegmentCoeffs coeffs =
      segment_coefficients(head.theta + t, head.eta + t, head.alpha + t, n,
                           dims.retrieve_before, sc);
  const double* rows = sc.row_coeffs.data();
  float* residual = sc.residual.data();
  if (dims.depth == 1) {
    // r = 2(k·A − v); the gradient of W1 is kᵀ r.
    sgemm(false, false, n, d, d, 1.0f, k, d, anchor, d, 0.0f, residual, d);
    for (int64_t i = 0; i < n * d; ++i) {
      residual[i] = 2.0f * (residual[i] - v[i]);
    }
    weighted_scores(q, k, n, d, sc.weights, sc.scores.data());
    retrieve_layer(q, n, d, d, w, s, sc.scores.data(), residual, rows,
                   sc.part_a.data(), y);
    update_layer(k, residual, n, d, d, coeffs, rows, sc.part_a.data(), w, s);
    return;
  }
  const float* anchor2 = anchor + d * m;
  float* hidden = sc.hidden.data();
  float* act = sc.act.data();
  float* back = sc.back.data();
  // Forward at the anchor: h = k·A1, a = act(h), r = 2(a·A2 − v).
  sgemm(false, false, n, m, d, 1.0f, k, d, anchor, m, 0.0f, hidden, m);
  neural_memory_activation(hidden, act, sc.deriv.data(), n * m, dims.gelu);
  sgemm(false, false, n, d, m, 1.0f, act, m, anchor2, d, 0.0f, residual, d);
  for (int64_t i = 0; i < n * d; ++i) {
    residual[i] = 2.0f * (residual[i] - v[i]);
  }
  // Backward: δ = (r·A2ᵀ) ⊙ act'(h); gradients kᵀδ (W1) and aᵀr (W2).
  sgemm(false, true, n, m, d, 1.0f, residual, d, anchor2, d, 0.0f, back, m);
  for (int64_t i = 0; i < n * m; ++i) back[i] *= sc.deriv[i];
  // Retrieval through both layers of M_i (or M_{i−1}).
  float* q_hidden = sc.q_hidden.data();
  float* q_act = sc.q_act.data();
  weighted_scores(q, k, n, d, sc.weights, sc.scores.data());
  retrieve_layer(q, n, d, m, w, s, sc.scores.data(), back, rows,
                 sc.part_a.data(), q_hidden);
  neural_memory_activation(q_hidden, q_act, sc.part_b.data(), n * m, dims.gelu);
  weighted_scores(q_act, act, n, m, sc.weights, sc.scores.data());
  retrieve_layer(q_act, n, m, d, w + d * m, s + d * m, sc.scores.data(),
                 residual, rows, sc.part_a.data(), y);
  update_layer(k, back, n, d, m, coeffs, rows, sc.part_a.data(), w, s);
  update_layer(act, residual, n, m, d, coeffs, rows, sc.part_a.data(),
               w + d * m, s + d * m);
}

}  // namespace

NeuralMemoryScratch::NeuralMemoryScratch(const NeuralMemoryDims& n) {
  rows = std::max<int64_t>(1, std::min(n.chunk, n.seq));
  int64_t wide = std::max(n.d, n.m);
  hidden.resize(rows * n.m);
  act.resize(rows * n.m);
  deriv.resize(rows * n.m);
  residual.resize(rows * n.d);
  back.resize(rows * n.m);
  q_hidden.resize(rows * n.m);
  q_act.resize(rows * n.m);
  scores.resize(rows * rows);
  part_a.resize(rows * wide);
  part_b.resize(rows * wide);
  weights.resize(rows * rows);
  momentum.resize(rows);
  row_coeffs.resize(4 * rows);
}

void neural_memory_head_chunked(const NeuralMemoryDims& n,
                                const NeuralMemoryHead& head,
                                NeuralMemoryScratch& scratch) {
  const int64_t p_count = n.params();
  float* w = head.state;
  float* anchor = w + 2 * p_count;
  int64_t t = 0;
  while (t < n.seq) {
    int64_t offset = (head.position + t) % n.chunk;
    if (offset == 0) std::copy_n(w, p_count, anchor);
    int64_t len = std::min(n.seq - t, n.chunk - offset);
    run_segment(n, head, t, len, scratch);
    t += len;
  }
}

}  // namespace seqrt::cpu
