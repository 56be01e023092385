// The quantized Linear with int8 activations (activation_bits 8): each row
// of X quantized per block once (quantize_activation_block, the rounding
// the reference uses), its codes widened to int16 in the kernel's chunk
// order, then W's rows spread over the threads, every group of 4 rows of X
// through the integer GEMV while the tile's codes are hot in cache. For a
// prompt's rows quantized_linear rounds X to its int8 values instead and
// takes the float path (round_to_int8_activations).
#include <algorithm>
#include <vector>

#include "backends/cpu/kernels/quantized_linear.h"
#include "backends/cpu/parallel.h"
#include "ops/linalg/quantized_linear.h"

namespace seqrt::cpu {
namespace {

// W rows per parallel task, and rows of X per kernel call.
constexpr int64_t kTileN = 16;
constexpr int64_t kRowGroup = 4;

// X's row `r` quantized block by block: codes into `codes` (K), scales
// into `scales` (n_blocks).
void quantize_row(const float* src, int64_t r, const QuantizedWeights& w,
                  int8_t* codes, float* scales) {
  const float* row = src + r * w.k;
  for (int64_t b = 0; b < w.n_blocks; ++b) {
    const int64_t k0 = b * w.block_size;
    scales[b] = quantize_activation_block(
        row + k0, std::min(w.block_size, w.k - k0), codes + k0);
  }
}

}  // namespace

void round_to_int8_activations(const float* src, int64_t rows,
                               const QuantizedWeights& w, float* out) {
  std::vector<int8_t> codes(static_cast<size_t>(w.k));
  std::vector<float> scales(static_cast<size_t>(w.n_blocks));
  for (int64_t r = 0; r < rows; ++r) {
    quantize_row(src, r, w, codes.data(), scales.data());
    for (int64_t i = 0; i < w.k; ++i) {
      out[r * w.k + i] = codes[i] * scales[i / w.block_size];
    }
  }
}

void quantized_linear_i8(const float* src, int64_t rows,
                         const QuantizedWeights& w, const float* bias,
                         onednn::Activation activation, float* dst) {
  const int64_t n = w.n, k = w.k, nb = w.n_blocks;
  std::vector<int8_t> codes(static_cast<size_t>(k));
  std::vector<int16_t> x(static_cast<size_t>(rows * k));
  std::vector<float> xs(static_cast<size_t>(rows * nb));
  for (int64_t r = 0; r < rows; ++r) {
    quantize_row(src, r, w, codes.data(), xs.data() + r * nb);
    permute_activation_codes(codes.data(), k, w.bits, w.block_size,
                             x.data() + r * k);
  }
  const int64_t tiles = (n + kTileN - 1) / kTileN;
  parallel_for(tiles, [&](int64_t t) {
    const int64_t n0 = t * kTileN, n1 = std::min(n, n0 + kTileN);
    for (int64_t r0 = 0; r0 < rows; r0 += kRowGroup) {
      quantized_gemv_i8(x.data() + r0 * k, k, xs.data() + r0 * nb,
                        std::min(kRowGroup, rows - r0), w, n0, n1,
                        dst + r0 * n, n);
    }
    finish_columns(dst, rows, n, n0, n1, bias, activation);
  });
}

}  // namespace seqrt::cpu
