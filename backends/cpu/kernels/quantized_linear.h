// The CPU kernel of seqrt::Linear with weight-only quantized W (bits 4/8,
// ops/linalg/quantized_linear.h). The fp32 weight is never materialised
// whole: a few rows of X (a decode step) run as a GEMV that unpacks the
// codes in registers and accumulates in fp32 (quantized_linear_simd.cc);
// more rows dequantise one tile of W at a time into a small per-thread
// buffer and multiply it with dnnl_sgemm. Both read X in the "chunk order"
// of permute_activations, which matches the order the codes unpack in, so
// the nibbles need no shuffle.
#pragma once

#include <cstdint>
#include <vector>

#include "backends/cpu/onednn/matmul.h"

namespace seqrt::cpu {

// Quantized W as the contract lays it out; sizes already checked.
struct QuantizedWeights {
  const uint8_t* codes = nullptr;        // (N, row_bytes)
  const float* scales = nullptr;         // (N, n_blocks)
  const uint8_t* zero_points = nullptr;  // (N, n_blocks), or null: 2^(bits-1)
  int64_t n = 0, k = 0, bits = 0, block_size = 0, n_blocks = 0, row_bytes = 0;
};

// Asks for the cache line of W kWeightPrefetchBytes past `at`, into L1: a
// decode step's weights come from past L2. 2 KiB ahead (the next group of
// rows for K 1024) took a 1024x2816 4-bit layer cycling through 16 copies
// of W from 74 to 70 us in the VNNI GEMV and from 84 to 79 us in the
// table-lookup one, an 8-bit layer from 110 to 105 us in the AVX-512 one
// (bench/quantized_linear_bench, copies 16, 4 runs each, interleaved); 1
// or 4 KiB ahead, into L2, or the scales as well did no better.
inline constexpr int64_t kWeightPrefetchBytes = 2048;
inline void prefetch_weights(const uint8_t* at) {
  __builtin_prefetch(at + kWeightPrefetchBytes, 0, 3);
}

// Rows [j0, j0 + NC) of W as a GEMV reads them side by side: each one's
// codes, scales and zero points (null when W has none).
template <int NC>
struct WeightRows {
  WeightRows(const QuantizedWeights& w, int64_t j0) {
    for (int c = 0; c < NC; ++c) {
      codes[c] = w.codes + (j0 + c) * w.row_bytes;
      scales[c] = w.scales + (j0 + c) * w.n_blocks;
      zero_points[c] =
          w.zero_points ? w.zero_points + (j0 + c) * w.n_blocks : nullptr;
    }
  }
  const uint8_t* codes[NC];
  const float* scales[NC];
  const uint8_t* zero_points[NC];
};

// dst (rows, N) = act(src (rows, K) · W_real + bias); bias (N) or null.
// Threads over N. activation_bits 8: X quantized to int8 per block first
// (the op's contract); up to 64 rows on a CPU with VNNI then run the
// integer GEMV (quantized_linear_vnni.h), the rest the float kernels on
// X's int8 values.
void quantized_linear(const float* src, int64_t rows, const QuantizedWeights& w,
                      const float* bias, onednn::Activation activation,
                      int64_t activation_bits, float* dst);
// One row of X (K) as int8 codes (K) and block scales (n_blocks), by
// quantize_activation_block, block by block of W.
void quantize_activation_row(const float* row, const QuantizedWeights& w,
                             int8_t* codes, float* scales);
// out (rows, K) = src's int8 values xq·xs, per block of W.
void round_to_int8_activations(const float* src, int64_t rows,
                               const QuantizedWeights& w, float* out);
// dst[:, n0:n1] = act(dst + bias) for dst (rows, N): both paths' last step.
void finish_columns(float* dst, int64_t rows, int64_t n, int64_t n0, int64_t n1,
                    const float* bias, onednn::Activation activation);

// out (K) = x (K) in chunk order, for `chunk` elements per chunk: for 4-bit
// codes each whole chunk holds its even elements first, then its odd ones
// (low nibbles, then high); the elements after the last whole chunk keep
// their order.
template <typename In, typename Out>
void permute_chunks(const In* x, int64_t k, int64_t bits, int64_t chunk,
                    Out* out) {
  const int64_t whole = k / chunk * chunk;
  const int64_t half = chunk / 2;
  for (int64_t c = 0; c < whole; c += chunk) {
    for (int64_t i = 0; i < chunk; ++i) {
      out[c + i] =
          bits == 4 ? x[c + (i < half ? 2 * i : 2 * (i - half) + 1)] : x[c + i];
    }
  }
  for (int64_t i = whole; i < k; ++i) out[i] = x[i];
}

// Whether the environment variable `name` leaves a hand-written kernel on
// (anything but "0"): SEQRT_CPU_VNNI, SEQRT_CPU_AVX512_GEMV.
bool cpu_kernel_enabled(const char* name);

// The SIMD pieces (dispatched to the CPU's best instruction set).
//
// Elements per chunk: codes unpack a chunk at a time; a chunk never
// crosses a block (16 on AVX2, 32 on AVX-512 when the block allows, for
// 4-bit codes).
int64_t quantized_chunk(int64_t bits, int64_t block_size);
// out (K) = x (K) in chunk order: for 4-bit, each whole chunk holds its
// even elements first, then its odd ones (low nibbles, then high); the
// elements after the last whole chunk keep their order.
void permute_activations(const float* x, int64_t k, int64_t bits,
                         int64_t block_size, float* out);
// dst[r·ldd + j] = Σ_k x[r·ldx + k]·W_real[k, j] for j in [n0, n1) and
// r < rows (1..4), x in chunk order; `block_sums` (rows, n_blocks) holds
// the sums of each row of x over each block (read for 4-bit codes only).
void quantized_gemv(const float* x, int64_t ldx, const float* block_sums,
                    int64_t rows, const QuantizedWeights& w, int64_t n0,
                    int64_t n1, float* dst, int64_t ldd);
// quantize_activation_block (ops/linalg/quantized_linear.h), vectorised:
// the same codes and scale.
float quantize_activation_simd(const float* x, int64_t count, int8_t* codes);
// out[(j - n0)·ld + (k - k0)] = W_real[k, j] in chunk order, for j in
// [n0, n1) and k in [k0, k1); k0 is a multiple of block_size, k1 too or K.
void dequantize_tile(const QuantizedWeights& w, int64_t n0, int64_t n1,
                     int64_t k0, int64_t k1, float* out, int64_t ld);

}  // namespace seqrt::cpu
