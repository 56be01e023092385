// The quantized Linear's driver: X into chunk order once, then W's rows
// spread over the threads, as a GEMV for a few rows of X (on AVX-512 its
// own GEMVs, quantized_linear_avx512.h; with int8
// activations and VNNI the integer one, quantized_linear_vnni.h) or as
// tiles dequantised into a per-task buffer and multiplied by dnnl_sgemm for
// more; the bias and the activation last, on the tile just written.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "backends/cpu/kernels/quantized_linear.h"
#include "backends/cpu/kernels/quantized_linear_avx512.h"
#include "backends/cpu/kernels/quantized_linear_vnni.h"
#include "backends/cpu/parallel.h"
#include "backends/cpu/simd/gemm.h"

namespace seqrt::cpu {
namespace {

// Up to this many rows of X the GEMV re-unpacks W per group of 4 rows;
// beyond, dequantising a tile once and running sgemm is cheaper.
constexpr int64_t kGemvMaxRows = 8;
// int8 activations run the VNNI GEMV (groups of 4 rows of X, W's tile in
// L1 across them) up to this many rows: it beats the float kernels on X's
// int8 values there (a 1024x2816 layer on a Xeon with AVX512-VNNI, 4-bit
// codes: 32 against 87 us at 1 row, 102 against 172 us at 4, 1.25 against
// 1.47 ms at 64; 8-bit 1.37 against 1.49 ms at 64); at 256 rows the two
// were even (5.4 ms), and the tiled sgemm scales better beyond.
constexpr int64_t kVnniMaxRows = 64;
constexpr int64_t kGemvGroup = 4;
// W rows per parallel task: the GEMV's, and the sgemm tile's N (128 rows
// took 64 rows of X through a 4-bit 1024x2816 layer in 1.77 ms, 64 rows
// in 2.10 ms, 256 in 1.79 ms: fewer, larger sgemm calls up to a point).
constexpr int64_t kGemvTileN = 16;
constexpr int64_t kGemmTileN = 128;
// Elements of K per dequantised tile (a whole number of blocks): with 128
// rows of W, 256 KiB of fp32, which stays in L2 while sgemm reads it.
constexpr int64_t kGemmTileK = 512;

float activate(onednn::Activation activation, float v) {
  using onednn::Activation;
  switch (activation) {
    case Activation::kRelu:
      return v > 0.0f ? v : 0.0f;
    case Activation::kGelu:
      return 0.5f * v * (1.0f + std::erf(v * 0.70710678118654752f));
    case Activation::kGeluTanh:
      return 0.5f * v *
             (1.0f +
              std::tanh(0.7978845608028654f * (v + 0.044715f * v * v * v)));
    case Activation::kSigmoid:
      return 1.0f / (1.0f + std::exp(-v));
    case Activation::kSilu:
      return v / (1.0f + std::exp(-v));
    case Activation::kNone:
      break;
  }
  return v;
}

// fn(n0, n1) for W's rows in tiles of kGemvTileN, over the threads.
template <typename Fn>
void gemv_tiles(int64_t n, Fn&& fn) {
  const int64_t tiles = (n + kGemvTileN - 1) / kGemvTileN;
  parallel_for(tiles, [&](int64_t t) {
    const int64_t n0 = t * kGemvTileN;
    fn(n0, std::min(n, n0 + kGemvTileN));
  });
}

}  // namespace

bool cpu_kernel_enabled(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr || std::strcmp(value, "0") != 0;
}

void finish_columns(float* dst, int64_t rows, int64_t n, int64_t n0, int64_t n1,
                    const float* bias, onednn::Activation activation) {
  if (bias == nullptr && activation == onednn::Activation::kNone) return;
  for (int64_t r = 0; r < rows; ++r) {
    float* row = dst + r * n;
    for (int64_t j = n0; j < n1; ++j) {
      row[j] = activate(activation, row[j] + (bias ? bias[j] : 0.0f));
    }
  }
}

void quantized_linear(const float* src, int64_t rows, const QuantizedWeights& w,
                      const float* bias, onednn::Activation activation,
                      int64_t activation_bits, float* dst) {
  const int64_t n = w.n, k = w.k;
  if (rows <= 0 || n <= 0) return;
  std::vector<float> rounded;
  if (activation_bits == 8) {
    if (rows <= kVnniMaxRows && vnni_gemv_takes(w)) {
      const VnniActivations xq = vnni_activations(src, rows, w);
      gemv_tiles(n, [&](int64_t n0, int64_t n1) {
        for (int64_t r0 = 0; r0 < rows; r0 += kGemvGroup) {
          vnni_gemv(xq, r0, std::min(kGemvGroup, rows - r0), w, n0, n1,
                    dst + r0 * n, n);
        }
        finish_columns(dst, rows, n, n0, n1, bias, activation);
      });
      return;
    }
    // Elsewhere (more rows, no VNNI, 4-bit blocks of 16) X takes its int8
    // values xq·xs for the float kernels below: the int8 computation up to
    // fp32 rounding.
    rounded.resize(static_cast<size_t>(rows * k));
    round_to_int8_activations(src, rows, w, rounded.data());
    src = rounded.data();
  }
  std::vector<float> x;
  if (rows <= kGemvMaxRows && avx512_gemv_takes(w)) {
    // AVX-512: the table-lookup GEMV (4-bit, X permuted) or the 8-bit one,
    // which reads X as it is.
    const float* xs = src;
    if (w.bits == 4) {
      x.resize(static_cast<size_t>(rows * k));
      for (int64_t r = 0; r < rows; ++r) {
        avx512_permute_4bit(src + r * k, k, x.data() + r * k);
      }
      xs = x.data();
    }
    gemv_tiles(n, [&](int64_t n0, int64_t n1) {
      for (int64_t r0 = 0; r0 < rows; r0 += kGemvGroup) {
        avx512_gemv(xs + r0 * k, k, std::min(kGemvGroup, rows - r0), w, n0, n1,
                    dst + r0 * n, n);
      }
      finish_columns(dst, rows, n, n0, n1, bias, activation);
    });
    return;
  }
  x.resize(static_cast<size_t>(rows * k));
  for (int64_t r = 0; r < rows; ++r) {
    permute_activations(src + r * k, k, w.bits, w.block_size, x.data() + r * k);
  }
  if (rows <= kGemvMaxRows) {
    // X's sums over each block: the 4-bit GEMV takes the zero points' share
    // off with them (8-bit codes subtract theirs first).
    std::vector<float> sums(static_cast<size_t>(rows * w.n_blocks), 0.0f);
    for (int64_t r = 0; w.bits == 4 && r < rows; ++r) {
      for (int64_t b = 0; b < w.n_blocks; ++b) {
        const int64_t k0 = b * w.block_size,
                      k1 = std::min(k, k0 + w.block_size);
        float& sum = sums[r * w.n_blocks + b];
        for (int64_t i = k0; i < k1; ++i) sum += src[r * k + i];
      }
    }
    gemv_tiles(n, [&](int64_t n0, int64_t n1) {
      for (int64_t r0 = 0; r0 < rows; r0 += kGemvGroup) {
        quantized_gemv(x.data() + r0 * k, k, sums.data() + r0 * w.n_blocks,
                       std::min(kGemvGroup, rows - r0), w, n0, n1, dst + r0 * n,
                       n);
      }
      finish_columns(dst, rows, n, n0, n1, bias, activation);
    });
    return;
  }
  const int64_t tile_k = std::max(w.block_size, kGemmTileK);
  const int64_t tiles = (n + kGemmTileN - 1) / kGemmTileN;
  parallel_for(tiles, [&](int64_t t) {
    const int64_t n0 = t * kGemmTileN, n1 = std::min(n, n0 + kGemmTileN);
    std::vector<float> tile(static_cast<size_t>((n1 - n0) * tile_k));
    for (int64_t r = 0; r < rows; ++r) {
      std::fill(dst + r * n + n0, dst + r * n + n1, 0.0f);
    }
    for (int64_t k0 = 0; k0 < k; k0 += tile_k) {
      const int64_t k1 = std::min(k, k0 + tile_k);
      dequantize_tile(w, n0, n1, k0, k1, tile.data(), tile_k);
      sgemm(false, true, rows, n1 - n0, k1 - k0, 1.0f, x.data() + k0, k,
            tile.data(), tile_k, 1.0f, dst + n0, n);
    }
    finish_columns(dst, rows, n, n0, n1, bias, activation);
  });
}

}  // namespace seqrt::cpu
