// The quantized Linear with int8 activations (activation_bits 8): X
// quantized per block by the op's own rounding (quantize_activation_block),
// then either the VNNI integer GEMV, W's rows spread over the threads, or,
// where that is not the faster path, X rounded to its int8 values xq·xs
// for quantized_linear's float kernels (round_to_int8_activations).
#include <algorithm>
#include <vector>

#include "backends/cpu/kernels/quantized_linear.h"
#include "backends/cpu/kernels/quantized_linear_vnni.h"
#include "backends/cpu/parallel.h"
#include "ops/linalg/quantized_linear.h"

namespace seqrt::cpu {
namespace {

// W rows per parallel task, and rows of X per kernel call.
constexpr int64_t kTileN = 16;
constexpr int64_t kRowGroup = 4;

}  // namespace

void quantize_activation_row(const float* row, const QuantizedWeights& w,
                             int8_t* codes, float* scales) {
  for (int64_t b = 0; b < w.n_blocks; ++b) {
    const int64_t k0 = b * w.block_size;
    scales[b] = quantize_activation_simd(
        row + k0, std::min(w.block_size, w.k - k0), codes + k0);
  }
}

void round_to_int8_activations(const float* src, int64_t rows,
                               const QuantizedWeights& w, float* out) {
  std::vector<int8_t> codes(static_cast<size_t>(w.k));
  std::vector<float> scales(static_cast<size_t>(w.n_blocks));
  for (int64_t r = 0; r < rows; ++r) {
    quantize_activation_row(src + r * w.k, w, codes.data(), scales.data());
    for (int64_t b = 0; b < w.n_blocks; ++b) {
      const int64_t k0 = b * w.block_size,
                    k1 = std::min(w.k, k0 + w.block_size);
      for (int64_t i = k0; i < k1; ++i) out[r * w.k + i] = codes[i] * scales[b];
    }
  }
}

void quantized_linear_i8(const float* src, int64_t rows,
                         const QuantizedWeights& w, const float* bias,
                         onednn::Activation activation, float* dst) {
  const int64_t n = w.n;
  const int64_t tiles = (n + kTileN - 1) / kTileN;
  const VnniActivations x = vnni_activations(src, rows, w);
  parallel_for(tiles, [&](int64_t t) {
    const int64_t n0 = t * kTileN, n1 = std::min(n, n0 + kTileN);
    for (int64_t r0 = 0; r0 < rows; r0 += kRowGroup) {
      vnni_gemv(x, r0, std::min(kRowGroup, rows - r0), w, n0, n1, dst + r0 * n,
                n);
    }
    finish_columns(dst, rows, n, n0, n1, bias, activation);
  });
}

}  // namespace seqrt::cpu
