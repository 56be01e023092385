// seqrt::NeuralMemory on the CPU at the goal's shape: B=1, H=4, T=4096,
// d=64 (GELU), per (batch, head) as the kernel runs them, over all heads
// with the kernel's own parallel loop. Arguments: depth (2: m=256; 1: m=d)
// and chunk size; chunk 1 runs the token step, the kernel the op uses for
// chunk_size 1, chunk > 1 the chunk-parallel form.
//
// Items processed are tokens. For chunk > 1, GFLOP/s counts the flops of the
// chunked form (forward and backward matrix products at the anchor,
// retrieval, the intra-chunk products and the end-of-chunk weight and
// momentum updates); for chunk 1 those of the token step (matrix-vector
// products and the per-weight momentum and weight updates). peak_frac is
// against this machine's FMA roofline.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <random>
#include <vector>

#include "backends/cpu/kernels/neural_memory.h"
#include "backends/cpu/parallel.h"
#include "bench/roofline.h"

namespace seqrt::cpu {
namespace {

constexpr int64_t kHeads = 4, kSeq = 4096, kD = 64, kWideM = 256;

NeuralMemoryDims dims(int64_t depth, int64_t chunk) {
  NeuralMemoryDims n;
  n.batch = 1;
  n.heads = kHeads;
  n.seq = kSeq;
  n.d = kD;
  n.m = depth == 2 ? kWideM : kD;
  n.depth = static_cast<int>(depth);
  n.gelu = true;
  n.chunk = chunk;
  return n;
}

// Flops of the chunked form over one head's sequence (2 per multiply-add).
double chunked_flops(const NeuralMemoryDims& n) {
  const double d = static_cast<double>(n.d), m = static_cast<double>(n.m);
  double total = 0;
  for (int64_t t = 0; t < n.seq; t += n.chunk) {
    const double len = static_cast<double>(std::min(n.chunk, n.seq - t));
    double macs = 0;
    if (n.depth == 1) {
      // k·A; q·W0 and q·S0; scores q·kᵀ and scores·r; W and S updates.
      macs = len * d * d * (1 + 2 + 2) + 2 * len * len * d;
    } else {
      // k·A1, a·A2, r·A2ᵀ; q·W0, q·S0 per layer; four intra-chunk
      // products; W and S updates per layer.
      macs = len * d * m * (3 + 4 + 4) + 2 * len * len * (d + m);
    }
    total += 2 * macs;
  }
  return total;
}

// Flops of the token step over one head's sequence: forward and backward at
// the anchor and retrieval as matrix-vector products, then per weight
// S = η·S − θ·l·r (3 flops) and W = (1 − α)·W + S (2 flops).
double token_step_flops(const NeuralMemoryDims& n) {
  const double d = static_cast<double>(n.d), m = static_cast<double>(n.m);
  const double macs = n.depth == 1 ? 2 * d * d : 5 * d * m;
  return static_cast<double>(n.seq) *
         (2 * macs + 5 * static_cast<double>(n.params()));
}

struct Data {
  std::vector<float> q, k, v, theta, eta, alpha, w1, w2, y, state;
};

Data make_data(const NeuralMemoryDims& n) {
  Data x;
  std::mt19937 rng(7);
  auto fill = [&](std::vector<float>& out, size_t size, float lo, float hi) {
    std::uniform_real_distribution<float> dist(lo, hi);
    out.resize(size);
    for (float& value : out) value = dist(rng);
  };
  size_t tokens = static_cast<size_t>(n.heads * n.seq);
  fill(x.q, tokens * n.d, -0.25f, 0.25f);
  fill(x.k, tokens * n.d, -0.25f, 0.25f);
  fill(x.v, tokens * n.d, -1.0f, 1.0f);
  fill(x.theta, tokens, 0.0f, 0.1f);
  fill(x.eta, tokens, 0.8f, 0.95f);
  fill(x.alpha, tokens, 0.0f, 0.02f);
  fill(x.w1, n.heads * n.d * n.m, -0.125f, 0.125f);
  fill(x.w2, n.heads * n.m * n.d, -0.0625f, 0.0625f);
  x.y.assign(tokens * n.d, 0.0f);
  x.state.assign(n.heads * 3 * n.params(), 0.0f);
  return x;
}

void BM_NeuralMemory(benchmark::State& bench) {
  const NeuralMemoryDims n = dims(bench.range(0), bench.range(1));
  Data x = make_data(n);
  const int64_t p_count = n.params();
  const int64_t w2_size = n.depth == 2 ? n.m * n.d : 0;
  for (auto _ : bench) {
    parallel_for(n.heads, [&](int64_t h) {
      float* state = x.state.data() + h * 3 * p_count;
      neural_memory_initial_state(n, x.w1.data() + h * n.d * n.m,
                                  x.w2.data() + h * w2_size, state);
      NeuralMemoryHead head;
      head.q = x.q.data() + h * n.seq * n.d;
      head.k = x.k.data() + h * n.seq * n.d;
      head.v = x.v.data() + h * n.seq * n.d;
      head.theta = x.theta.data() + h * n.seq;
      head.eta = x.eta.data() + h * n.seq;
      head.alpha = x.alpha.data() + h * n.seq;
      head.y = x.y.data() + h * n.seq * n.d;
      head.state = state;
      if (n.chunk > 1) {
        NeuralMemoryScratch scratch(n);
        neural_memory_head_chunked(n, head, scratch);
      } else {
        neural_memory_head_token_step(n, head);
      }
    });
    benchmark::DoNotOptimize(x.y.data());
  }
  bench.SetItemsProcessed(bench.iterations() * n.heads * n.seq);
  double flops = n.chunk > 1 ? chunked_flops(n) : token_step_flops(n);
  bench::report_flops(bench, static_cast<double>(n.heads) * flops);
}

BENCHMARK(BM_NeuralMemory)
    ->ArgNames({"depth", "chunk"})
    ->ArgsProduct({{2, 1}, {64, 16, 1}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace seqrt::cpu
