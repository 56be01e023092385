// X of the quantized Linear with int8 activations (activation_bits 8):
// quantized per block by the op's own rounding (quantize_activation_block,
// vectorised), for the VNNI GEMV (vnni_activations), or rounded to its int8
// values xq·xs for quantized_linear's float kernels.
#include <algorithm>
#include <vector>

#include "backends/cpu/kernels/quantized_linear.h"

namespace seqrt::cpu {
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

}  // namespace seqrt::cpu
