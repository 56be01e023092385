// The int8-activation GEMV on CPUs with 8-bit dot products (AVX512-VNNI's
// vpdpbusd: 32 u8×s8 products summed into 8 int32 lanes per 256-bit
// instruction). Highway 1.0.3, Debian 12's, has no such op, so this one
// kernel is written with intrinsics for that target and chosen at run time
// (quantized_linear_i8.cc falls back to the Highway int16 GEMV elsewhere).
//
// The codes are the unsigned operand as they are stored; X's int8 codes
// the signed one. So the dot products hold Σ code·xq, and the zero point's
// share zp·Σ xq is taken off in integers, lane by lane, before anything is
// rounded: in float it would cancel against a far larger sum (activations
// after SiLU are mostly positive) and cost 1e-3 of the result.
#pragma once

#include <cstdint>
#include <vector>

#include "backends/cpu/kernels/quantized_linear.h"

namespace seqrt::cpu {

// Whether this CPU runs the VNNI GEMV and it takes `w` (4- or 8-bit codes,
// blocks of at least 32). SEQRT_CPU_VNNI=0 turns it off (to compare).
bool vnni_gemv_takes(const QuantizedWeights& w);

// X's rows quantized for the VNNI GEMV: codes in unit order (4-bit: each
// unit of 64 elements holds its even elements, then its odd ones, as the
// nibbles unpack; 8-bit: units of 32 in order), the elements past the last
// whole unit in order; per row and block the scale xs; per row and unit
// the sums of the codes each int32 lane of vpdpbusd takes in (8 lanes),
// times −zp when W has no zero points (its fixed 2^(bits-1)), else −1.
struct VnniActivations {
  int64_t k = 0, unit = 0, k_units = 0;  // k_units: the elements in units
  std::vector<int8_t> codes;             // (rows, k)
  std::vector<float> scales;             // (rows, n_blocks)
  std::vector<int32_t> lane_offsets;     // (rows, k_units / unit, 8)
};
VnniActivations vnni_activations(const float* src, int64_t rows,
                                 const QuantizedWeights& w);

// dst[r·ldd + j] for r in [r0, r0 + rows) (rows 1..4) and j in [n0, n1).
void vnni_gemv(const VnniActivations& x, int64_t r0, int64_t rows,
               const QuantizedWeights& w, int64_t n0, int64_t n1, float* dst,
               int64_t ldd);

}  // namespace seqrt::cpu
