// The CPU's weight-only quantized Linear (backends/cpu/kernels/
// quantized_linear.h), f32 activations against int8 activations
// (activation_bits 8), beside the f32 matmul it replaces (dnnl_sgemm on
// the plain weights): a Llama-style layer (K 1024 -> N 2816, and the down
// projection 2816 -> 1024) at a decode step (M 1), a few rows (M 4) and a
// prompt (M 64). Args: M, K, N, bits (0: the f32 sgemm), activation_bits.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "backends/cpu/kernels/quantized_linear.h"
#include "backends/cpu/simd/gemm.h"
#include "bench/roofline.h"
#include "testing/random_tensor.h"

namespace seqrt {
namespace {

constexpr int64_t kBlock = 32;

void quantized(benchmark::State& state) {
  const int64_t m = state.range(0), k = state.range(1), n = state.range(2);
  const int64_t bits = state.range(3), activation_bits = state.range(4);
  const Tensor x = random_uniform_f32({m, k}, 1);
  std::vector<float> y(static_cast<size_t>(m * n));
  if (bits == 0) {
    const Tensor w = random_uniform_f32({k, n}, 2);
    for (auto _ : state) {
      cpu::sgemm(false, false, m, n, k, 1.0f, x.data_as<float>(), k,
                 w.data_as<float>(), n, 0.0f, y.data(), n);
      benchmark::DoNotOptimize(y.data());
    }
    bench::report_flops(state, 2.0 * m * k * n);
    return;
  }
  cpu::QuantizedWeights w;
  w.n = n;
  w.k = k;
  w.bits = bits;
  w.block_size = kBlock;
  w.n_blocks = (k + kBlock - 1) / kBlock;
  w.row_bytes = (k * bits + 7) / 8;
  std::vector<uint8_t> codes(static_cast<size_t>(n * w.row_bytes));
  for (size_t i = 0; i < codes.size(); ++i) {
    codes[i] = static_cast<uint8_t>(i * 2654435761u >> 24);
  }
  std::vector<float> scales(static_cast<size_t>(n * w.n_blocks), 0.01f);
  w.codes = codes.data();
  w.scales = scales.data();
  for (auto _ : state) {
    cpu::quantized_linear(x.data_as<float>(), m, w, nullptr,
                          cpu::onednn::Activation::kNone, activation_bits,
                          y.data());
    benchmark::DoNotOptimize(y.data());
  }
  bench::report_flops(state, 2.0 * m * k * n);
}

void shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"M", "K", "N", "bits", "abits"});
  for (int64_t m : {1, 4, 64}) {
    for (auto [k, n] : {std::pair<int64_t, int64_t>{1024, 2816}, {2816, 1024}}) {
      b->Args({m, k, n, 0, 0});
      for (int64_t bits : {4, 8}) {
        b->Args({m, k, n, bits, 0});
        b->Args({m, k, n, bits, 8});
      }
    }
  }
  b->Unit(benchmark::kMicrosecond);
}

BENCHMARK(quantized)->Apply(shapes);

}  // namespace
}  // namespace seqrt
