// seqrt::NeuralMemory on the CPU: the chunk-parallel form against the token
// step, per (batch, head) as the kernel runs them, over all heads with the
// kernel's own parallel loop. B=1, H=4, T=2048, d=64, m=256 (depth 2, GELU),
// chunk 16 and 64; items processed are tokens.
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "backends/cpu/kernels/neural_memory.h"
#include "backends/cpu/parallel.h"

namespace seqrt::cpu {
namespace {

constexpr int64_t kHeads = 4, kSeq = 2048, kD = 64, kM = 256;

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
  size_t tokens = static_cast<size_t>(kHeads * kSeq);
  fill(x.q, tokens * kD, -0.25f, 0.25f);
  fill(x.k, tokens * kD, -0.25f, 0.25f);
  fill(x.v, tokens * kD, -1.0f, 1.0f);
  fill(x.theta, tokens, 0.0f, 0.1f);
  fill(x.eta, tokens, 0.8f, 0.95f);
  fill(x.alpha, tokens, 0.0f, 0.02f);
  fill(x.w1, kHeads * kD * kM, -0.125f, 0.125f);
  fill(x.w2, kHeads * kM * kD, -0.0625f, 0.0625f);
  x.y.assign(tokens * kD, 0.0f);
  x.state.assign(kHeads * 3 * n.params(), 0.0f);
  return x;
}

void run(benchmark::State& bench, bool chunked) {
  NeuralMemoryDims n;
  n.batch = 1;
  n.heads = kHeads;
  n.seq = kSeq;
  n.d = kD;
  n.m = kM;
  n.chunk = bench.range(0);
  Data x = make_data(n);
  const int64_t p_count = n.params();
  for (auto _ : bench) {
    parallel_for(kHeads, [&](int64_t h) {
      float* state = x.state.data() + h * 3 * p_count;
      neural_memory_initial_state(n, x.w1.data() + h * kD * kM,
                                  x.w2.data() + h * kM * kD, state);
      NeuralMemoryHead head;
      head.q = x.q.data() + h * kSeq * kD;
      head.k = x.k.data() + h * kSeq * kD;
      head.v = x.v.data() + h * kSeq * kD;
      head.theta = x.theta.data() + h * kSeq;
      head.eta = x.eta.data() + h * kSeq;
      head.alpha = x.alpha.data() + h * kSeq;
      head.y = x.y.data() + h * kSeq * kD;
      head.state = state;
      if (chunked) {
        NeuralMemoryScratch scratch(n);
        neural_memory_head_chunked(n, head, scratch);
      } else {
        neural_memory_head_token_step(n, head);
      }
    });
    benchmark::DoNotOptimize(x.y.data());
  }
  bench.SetItemsProcessed(bench.iterations() * kHeads * kSeq);
}

void BM_NeuralMemory_Chunked(benchmark::State& bench) { run(bench, true); }
void BM_NeuralMemory_TokenStep(benchmark::State& bench) { run(bench, false); }

BENCHMARK(BM_NeuralMemory_Chunked)
    ->Arg(16)
    ->Arg(64)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_NeuralMemory_TokenStep)
    ->Arg(16)
    ->Arg(64)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace seqrt::cpu

