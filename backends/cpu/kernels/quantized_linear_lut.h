// The weight-only GEMV of 4-bit codes on AVX-512 CPUs, by table lookup: per
// chunk of 32 codes (one block or part of one) the block's 16 possible
// weights (code − zp)·scale form one 512-bit table, and vpermps turns 16
// codes at a time into their weights, exactly W_real as the reference
// kernel dequantises it. The codes need no mask, widening or conversion
// (vpermps reads an index's low 4 bits), so a chunk costs 7 vector ops
// where the Highway GEMV (quantized_linear_simd.cc) spends 8; it is the
// port-bound inner loop of a decode step. Highway 1.0.3 checks a table
// index's range, so this one kernel is written with intrinsics for that
// target and chosen at run time.
#pragma once

#include <cstdint>

#include "backends/cpu/kernels/quantized_linear.h"

namespace seqrt::cpu {

// Whether this CPU runs the table GEMV and it takes `w`: 4-bit codes in
// blocks of at least 32 (a chunk never spans two blocks).
// SEQRT_CPU_LUT_GEMV=0 turns it off (to compare).
bool lut_gemv_takes(const QuantizedWeights& w);

// out (K) = x (K) in the order the table GEMV reads it: per whole chunk of
// 32 elements, lane l of the first 16 holds element 8·(l % 4) + l / 4 and
// of the second 16 element 8·(l % 4) + 4 + l / 4 (the nibble each lane
// shifts down); the elements after the last whole chunk keep their order.
void lut_permute(const float* x, int64_t k, float* out);

// dst[r·ldd + j] = Σ_k x[r·ldx + k]·W_real[k, j] for j in [n0, n1) and
// r < rows (1..4), x in lut_permute's order.
void lut_gemv(const float* x, int64_t ldx, int64_t rows,
              const QuantizedWeights& w, int64_t n0, int64_t n1, float* dst,
              int64_t ldd);

}  // namespace seqrt::cpu
