// SSD's chunked (state-space-duality) form: within a chunk of q tokens,
//   Y = (C·Bᵀ ∘ L)·X + diag(e^cs)·C·Sᵀ,   S ← e^{cs_q}·S + (w∘X)ᵀ·B,
// with cs the cumulative decay exponents in the chunk, L[l,k] =
// e^{min(cs_l − cs_k, 0)}·Δ_k for k ≤ l (0 above the diagonal, never
// computed, so no inf·0) and w_k = Δ_k·e^{cs_q − cs_k}. Four GEMMs per
// chunk replace q sequential state updates.
#include <algorithm>
#include <cmath>
#include <vector>

#include "backends/cpu/kernels/scan_simd.h"
#include "backends/cpu/kernels/ssd_kernel.h"
#include "backends/cpu/simd/gemm.h"
#include "backends/cpu/simd/vec.h"

namespace seqrt::cpu {
namespace {

// Chunk length: per token and head the chunked form does 2QP flops of
// intra-chunk products and 4NP of state products, plus a share of C·Bᵀ
// (2QN per group). The state products do not shrink with Q, so a chunk of
// about N/2 keeps the intra-chunk work at a quarter of the total while the
// GEMMs stay deep enough to run well; measured (H=24, P=64, N=128, L=4096,
// bench/scan_bench.cc, 2 loaded Zen 3 cores): Q = 64 ~1.2x faster than 32;
// 128 ~10 % and 256 ~1.6x slower than 64. Larger hints are capped at that
// length; below 8 tokens the recurrence is used.
constexpr int64_t kMinChunkedLength = 8;
constexpr int64_t kMinChunk = 16;
constexpr int64_t kMaxChunk = 64;

struct ChunkBuffers {
  std::vector<float> m, cs, c_scaled, x_weighted;
  ChunkBuffers(int64_t chunk, int64_t n, int64_t p)
      : m(static_cast<size_t>(chunk * chunk)),
        cs(static_cast<size_t>(chunk)),
        c_scaled(static_cast<size_t>(chunk * n)),
        x_weighted(static_cast<size_t>(chunk * p)) {}
};

// M[l,k] = (C_l·B_k)·e^{min(cs_l − cs_k, 0)}·Δ_k for k ≤ l, else 0, in
// place over C·Bᵀ.
void decay_mask(ChunkBuffers& buf, const float* dt, int64_t q, int64_t ld) {
  for (int64_t l = 0; l < q; ++l) {
    float* m = buf.m.data() + l * ld;
    decay_mask_row(m, buf.cs.data(), dt, buf.cs[l], static_cast<size_t>(l + 1),
                   m);
    std::fill(m + l + 1, m + q, 0.0f);
  }
}

void run_chunk(const SsdHead& head, int64_t start, int64_t q, int64_t chunk,
               ChunkBuffers& buf, float* state) {
  const SsdDims& d = head.dims;
  const int64_t n = d.state, p = d.head_dim;
  const int64_t ld_bc = d.groups * n;
  const int64_t ld_x = d.heads * p;
  const float* bm = head.b + start * ld_bc + head.group * n;
  const float* cm = head.c + start * ld_bc + head.group * n;
  const float* x = head.x + start * ld_x;
  float* y = head.y + start * ld_x;
  const float* dt = head.dt + start;
  float acc = 0.0f;
  for (int64_t l = 0; l < q; ++l) {
    acc += dt[l] * head.a;
    buf.cs[l] = acc;
  }
  // Intra-chunk: Y = (C·Bᵀ ∘ L)·X.
  sgemm(false, true, q, q, n, 1.0f, cm, ld_bc, bm, ld_bc, 0.0f, buf.m.data(),
        chunk);
  decay_mask(buf, dt, q, chunk);
  sgemm(false, false, q, p, q, 1.0f, buf.m.data(), chunk, x, ld_x, 0.0f, y,
        ld_x);
  // From the state entering the chunk: Y += diag(e^cs)·C·Sᵀ.
  for (int64_t l = 0; l < q; ++l) {
    float* row = buf.c_scaled.data() + l * n;
    std::copy_n(cm + l * ld_bc, n, row);
    scale(std::exp(buf.cs[l]), row, static_cast<size_t>(n));
  }
  sgemm(false, true, q, p, n, 1.0f, buf.c_scaled.data(), n, state, n, 1.0f, y,
        ld_x);
  // State leaving the chunk: S = e^{cs_q}·S + (w∘X)ᵀ·B.
  const float last = buf.cs[q - 1];
  for (int64_t k = 0; k < q; ++k) {
    float* row = buf.x_weighted.data() + k * p;
    std::copy_n(x + k * ld_x, p, row);
    scale(dt[k] * std::exp(std::min(last - buf.cs[k], 0.0f)), row,
          static_cast<size_t>(p));
  }
  sgemm(true, false, p, n, q, 1.0f, buf.x_weighted.data(), p, bm, ld_bc,
        std::exp(last), state, n);
}

}  // namespace

int64_t ssd_chunk_length(const SsdDims& dims, int64_t hint) {
  if (dims.length < kMinChunkedLength) return 0;
  int64_t by_shape = kMinChunk;
  while (by_shape * 4 <= dims.state && by_shape < kMaxChunk) by_shape *= 2;
  return std::clamp(hint, kMinChunk, by_shape);
}

bool decays_bounded(const SsdHead& head) {
  for (int64_t t = 0; t < head.dims.length; ++t) {
    if (!(head.dt[t] * head.a <= 0.0f)) return false;
  }
  return true;
}

void chunked_head(const SsdHead& head, int64_t chunk, float* state) {
  const SsdDims& d = head.dims;
  // y is zero-initialised: with no state or no channels it stays 0.
  if (d.state == 0 || d.head_dim == 0) return;
  ChunkBuffers buf(chunk, d.state, d.head_dim);
  for (int64_t start = 0; start < d.length; start += chunk) {
    const int64_t q = std::min(chunk, d.length - start);
    run_chunk(head, start, q, chunk, buf, state);
  }
}

}  // namespace seqrt::cpu
