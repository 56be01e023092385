// The weight-only GEMVs with f32 activations on AVX-512 CPUs, the inner
// loop of a decode step. Four rows of W run side by side, so four
// independent FMA chains hide the latency and each load of X serves all
// four.
// - 4-bit codes, by table lookup: per chunk of 32 codes (one block or part
//   of one) the block's 16 possible weights (code − zp)·scale form one
//   512-bit table, and vpermps turns 16 codes at a time into their weights,
//   exactly W_real as the reference kernel dequantises it. The codes need
//   no mask, widening or conversion (vpermps reads an index's low 4 bits):
//   7 vector ops per chunk where the Highway GEMV (quantized_linear_simd.cc)
//   spends 8, and no per-block scaling.
// - 8-bit codes: per 16 codes one widening, the fixed zero point 128 taken
//   off by flipping the sign bit of the bytes first (exact; a 128-bit op,
//   off the two 512-bit ports), a convert and an FMA per row of X into the
//   block's partial sum, scaled once per block.
// Highway 1.0.3 checks a table index's range, so these kernels are written
// with intrinsics for that target and chosen at run time.
#pragma once

#include <cstdint>

#include "backends/cpu/kernels/quantized_linear.h"

namespace seqrt::cpu {

// Whether this CPU runs the AVX-512 GEMVs and they take `w`: 8-bit codes,
// or 4-bit codes in blocks of at least 32 (a chunk never spans two
// blocks). SEQRT_CPU_AVX512_GEMV=0 turns them off (to compare).
bool avx512_gemv_takes(const QuantizedWeights& w);

// out (K) = x (K) in the order the 4-bit GEMV reads it: per whole chunk of
// 32 elements, lane l of the first 16 holds element 8·(l % 4) + l / 4 and
// of the second 16 element 8·(l % 4) + 4 + l / 4 (the nibble each lane
// shifts down); the elements after the last whole chunk keep their order.
// The 8-bit GEMV reads X as it is.
void avx512_permute_4bit(const float* x, int64_t k, float* out);

// dst[r·ldd + j] = Σ_k x[r·ldx + k]·W_real[k, j] for j in [n0, n1) and
// r < rows (1..4); for 4-bit codes x in avx512_permute_4bit's order.
void avx512_gemv(const float* x, int64_t ldx, int64_t rows,
                 const QuantizedWeights& w, int64_t n0, int64_t n1, float* dst,
                 int64_t ldd);

}  // namespace seqrt::cpu
