// The CPU's weight-only quantized Linear (backends/cpu/kernels/
// quantized_linear.h), f32 activations against int8 activations
// (activation_bits 8), beside the f32 matmul it replaces (dnnl_sgemm on
// the plain weights): a Llama-style layer (K 1024 -> N 2816, and the down
// projection 2816 -> 1024) at a decode step (M 1), a few rows (M 4) and a
// prompt (M 64). Args: M, K, N, bits (0: the f32 sgemm), activation_bits,
// copies: 1 keeps W warm in L2; a decode step's shapes also cycle through
// 16 copies of W (29 MiB of 4-bit codes and scales), read from past L2 as
// in a model's step.
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
  const int64_t copies = state.range(5);
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
  const auto code_bytes = static_cast<size_t>(n * w.row_bytes);
  const auto scale_count = static_cast<size_t>(n * w.n_blocks);
  std::vector<uint8_t> codes(code_bytes * copies);
  for (size_t i = 0; i < codes.size(); ++i) {
    codes[i] = static_cast<uint8_t>(i * 2654435761u >> 24);
  }
  std::vector<float> scales(scale_count * copies, 0.01f);
  size_t copy = 0;
  for (auto _ : state) {
    // The next copy of W: with several, each run reads W from past L2, as
    // a model's step reads each layer's weights once.
    w.codes = codes.data() + copy * code_bytes;
    w.scales = scales.data() + copy * scale_count;
    copy = (copy + 1) % static_cast<size_t>(copies);
    cpu::quantized_linear(x.data_as<float>(), m, w, nullptr,
                          cpu::onednn::Activation::kNone, activation_bits,
                          y.data());
    benchmark::DoNotOptimize(y.data());
  }
  bench::report_flops(state, 2.0 * m * k * n);
}

void shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"M", "K", "N", "bits", "abits", "copies"});
  for (int64_t m : {1, 4, 64}) {
    for (auto [k, n] :
         {std::pair<int64_t, int64_t>{1024, 2816}, {2816, 1024}}) {
      b->Args({m, k, n, 0, 0, 1});
      for (int64_t bits : {4, 8}) {
        for (int64_t abits : {0, 8}) {
          b->Args({m, k, n, bits, abits, 1});
          if (m == 1) b->Args({m, k, n, bits, abits, 16});
        }
      }
    }
  }
  b->Unit(benchmark::kMicrosecond);
}

BENCHMARK(quantized)->Apply(shapes);

}  // namespace
}  // namespace seqrt
