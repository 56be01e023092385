// The CPU flash-attention core (backends/cpu/kernels/attention_kernel.h):
// causal prefill (softmax and sigmoid) and single-token decode over a KV
// cache (B=1, H=12, d=64), in GFLOP/s
// (2 flops per multiply-add of Q.K^T and P.V; causal prefill counts only
// the visible half).
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "backends/cpu/kernels/attention_kernel.h"
#include "bench/roofline.h"

namespace seqrt::cpu {
namespace {

constexpr int64_t kHeadDim = 64;

std::vector<float> random_floats(size_t n, uint32_t seed) {
  std::vector<float> out(n);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (float& x : out) x = u(rng);
  return out;
}

struct Problem {
  std::vector<float> q, k, v, y;
  AttentionArgs args;
};

// (1, heads, tq, 64) queries over (1, kv_heads, tk, 64) keys and values.
Problem make_problem(int64_t heads, int64_t kv_heads, int64_t tq, int64_t tk,
                     bool causal) {
  Problem p;
  p.q = random_floats(heads * tq * kHeadDim, 1);
  p.k = random_floats(kv_heads * tk * kHeadDim, 2);
  p.v = random_floats(kv_heads * tk * kHeadDim, 3);
  p.y.assign(heads * tq * kHeadDim, 0.0f);
  AttentionArgs& a = p.args;
  a.batch = 1;
  a.q_heads = heads;
  a.kv_heads = kv_heads;
  a.q_len = tq;
  a.kv_len = tk;
  a.head_dim = a.value_dim = kHeadDim;
  auto strides = [](int64_t h, int64_t t, int64_t* s) {
    s[0] = h * t * kHeadDim;
    s[1] = t * kHeadDim;
    s[2] = kHeadDim;
  };
  a.q = p.q.data();
  strides(heads, tq, a.q_stride);
  a.k = p.k.data();
  strides(kv_heads, tk, a.k_stride);
  a.v = p.v.data();
  strides(kv_heads, tk, a.v_stride);
  a.y = p.y.data();
  strides(heads, tq, a.y_stride);
  a.scale = 0.125f;
  a.causal = causal;
  return p;
}

constexpr int64_t kHeads = 12;  // the goal's shape: B=1, H=12, d=64

// Arguments: T, sigmoid scoring (0 = softmax).
void BM_AttentionPrefill_Flash(benchmark::State& state) {
  const int64_t t = state.range(0);
  Problem p = make_problem(kHeads, kHeads, t, t, true);
  p.args.sigmoid = state.range(1) != 0;
  for (auto _ : state) {
    attention_forward(p.args);
    benchmark::DoNotOptimize(p.y.data());
  }
  // Visible pairs t(t+1)/2 per head, 2 GEMMs of 2 flops per pair and dim.
  bench::report_flops(state, kHeads * t * (t + 1) / 2.0 * 4.0 * kHeadDim);
}
BENCHMARK(BM_AttentionPrefill_Flash)
    ->ArgsProduct({{512, 2048, 8192}, {0, 1}})
    ->ArgNames({"T", "sigmoid"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// Arguments: cache length, kv heads, cold (1: every iteration reads a
// different copy of the cache, together twice the last-level cache, so the
// keys and values come from memory as in a model with many layers; 0: the
// same cache every iteration, cache-resident while it fits).
void BM_AttentionDecode_Flash(benchmark::State& state) {
  const int64_t cache = state.range(0), kv_heads = state.range(1);
  const bool cold = state.range(2) != 0;
  const double cache_bytes = 2.0 * kv_heads * cache * kHeadDim * sizeof(float);
  constexpr double kColdBytes = 64.0 * 1024 * 1024;  // 2 x this L3
  const int copies = cold ? 1 + static_cast<int>(kColdBytes / cache_bytes) : 1;
  std::vector<Problem> problems;
  for (int c = 0; c < copies; ++c) {
    problems.push_back(make_problem(kHeads, kv_heads, 1, cache, true));
  }
  size_t next = 0;
  for (auto _ : state) {
    attention_forward(problems[next].args);
    benchmark::DoNotOptimize(problems[next].y.data());
    next = (next + 1) % problems.size();
  }
  bench::report_bytes(state, cache_bytes);
  // Time per cached key: constant when the step is linear in the length.
  state.counters["ns_per_key"] =
      benchmark::Counter(static_cast<double>(cache) / 1e9,
                         benchmark::Counter::kIsIterationInvariantRate |
                             benchmark::Counter::kInvert);
}
BENCHMARK(BM_AttentionDecode_Flash)
    ->ArgsProduct({{1024, 4096, 8192, 16384, 32768}, {12}, {1}})
    ->Args({4096, 12, 0})
    ->Args({8192, 12, 0})
    ->Args({8192, 4, 1})
    ->Args({8192, 1, 1})
    ->ArgNames({"cache", "kv_heads", "cold"})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

}  // namespace
}  // namespace seqrt::cpu
