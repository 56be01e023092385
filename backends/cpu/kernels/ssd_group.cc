// SSD's chunked form for all heads of one (batch, group) at once. The heads
// share C and B, so the two products with the state, 4·N·P flops per token
// and head and most of the work, become one GEMM each over all the group's
// heads per chunk (Q×N by N×(heads·P), and (heads·P)×Q by Q×N) instead of
// one small GEMM per head; the per-head rest is the decay mask and the
// intra-chunk product. Same algebra as
// ssd_chunked.cc:
//   Y_h = diag(e^{cs_h})·C·S_hᵀ + (C·Bᵀ ∘ L_h)·X_h,
//   S_h ← e^{cs_h,q}·S_h + (w_h∘X_h)ᵀ·B.
#include <algorithm>
#include <cmath>
#include <vector>

#include "backends/cpu/kernels/scan_simd.h"
#include "backends/cpu/kernels/ssd_kernel.h"
#include "backends/cpu/simd/gemm.h"
#include "backends/cpu/simd/vec.h"

namespace seqrt::cpu {
namespace {

struct GroupBuffers {
  std::vector<float> cb, m, cs, w;
  GroupBuffers(int64_t chunk, int64_t heads, int64_t p)
      : cb(static_cast<size_t>(chunk * chunk)),
        m(static_cast<size_t>(heads * chunk * chunk)),
        cs(static_cast<size_t>(heads * chunk)),
        w(static_cast<size_t>(chunk * heads * p)) {}
};

// Head i of the group over chunk [start, start + q): scales its C·Sᵀ rows
// by e^{cs}, adds the intra-chunk product, writes w∘X into the shared
// (q × heads·P) block and decays its state to the chunk's end.
void head_in_chunk(const SsdGroup& g, int64_t i, int64_t start, int64_t q,
                   int64_t chunk, GroupBuffers& buf, float* states) {
  const SsdDims& d = g.dims;
  const int64_t p = d.head_dim;
  const int64_t ld_x = d.heads * p;
  const int64_t ld_w = g.heads * p;
  const float* dt = g.dt + i * d.length + start;
  const float a = g.a[i];
  float* cs = buf.cs.data() + i * chunk;
  float acc = 0.0f;
  for (int64_t l = 0; l < q; ++l) {
    acc += dt[l] * a;
    cs[l] = acc;
  }
  const float* x = g.x + start * ld_x + i * p;
  float* y = g.y + start * ld_x + i * p;
  for (int64_t l = 0; l < q; ++l) {
    scale(std::exp(cs[l]), y + l * ld_x, static_cast<size_t>(p));
  }
  float* m = buf.m.data() + i * chunk * chunk;
  for (int64_t l = 0; l < q; ++l) {
    decay_mask_row(buf.cb.data() + l * chunk, cs, dt, cs[l],
                   static_cast<size_t>(l + 1), m + l * chunk);
    std::fill(m + l * chunk + l + 1, m + l * chunk + q, 0.0f);
  }
  sgemm(false, false, q, p, q, 1.0f, m, chunk, x, ld_x, 1.0f, y, ld_x);
  const float last = cs[q - 1];
  for (int64_t k = 0; k < q; ++k) {
    float* row = buf.w.data() + k * ld_w + i * p;
    std::copy_n(x + k * ld_x, p, row);
    scale(dt[k] * std::exp(std::min(last - cs[k], 0.0f)), row,
          static_cast<size_t>(p));
  }
  scale(std::exp(last), states + i * p * d.state,
        static_cast<size_t>(p * d.state));
}

}  // namespace

void chunked_group(const SsdGroup& g, int64_t chunk, float* states) {
  const SsdDims& d = g.dims;
  const int64_t n = d.state, p = d.head_dim;
  if (n == 0 || p == 0 || g.heads == 0) return;
  const int64_t ld_bc = d.groups * n;
  const int64_t ld_x = d.heads * p;
  const int64_t width = g.heads * p;
  GroupBuffers buf(chunk, g.heads, p);
  for (int64_t start = 0; start < d.length; start += chunk) {
    const int64_t q = std::min(chunk, d.length - start);
    const float* bm = g.b + start * ld_bc;
    const float* cm = g.c + start * ld_bc;
    // Y = C·Sᵀ for every head (rows scaled per head below), and C·Bᵀ.
    sgemm(false, true, q, width, n, 1.0f, cm, ld_bc, states, n, 0.0f,
          g.y + start * ld_x, ld_x);
    sgemm(false, true, q, q, n, 1.0f, cm, ld_bc, bm, ld_bc, 0.0f, buf.cb.data(),
          chunk);
    for (int64_t i = 0; i < g.heads; ++i) {
      head_in_chunk(g, i, start, q, chunk, buf, states);
    }
    // S += (w∘X)ᵀ·B for every head (already decayed by e^{cs_q}).
    sgemm(true, false, width, n, q, 1.0f, buf.w.data(), width, bm, ld_bc, 1.0f,
          states, n);
  }
}

}  // namespace seqrt::cpu
