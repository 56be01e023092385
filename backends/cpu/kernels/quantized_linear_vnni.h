// The int8-activation GEMV on CPUs with 8-bit dot products (AVX512-VNNI's
// vpdpbusd: 64 u8×s8 products summed into 16 int32 lanes per 512-bit
// instruction). Highway 1.0.3, Debian 12's, has no such op, so this one
// kernel is written with intrinsics for that target and chosen at run time
// (elsewhere quantized_linear runs its float kernels on X's int8 values).
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

// Whether this CPU runs the VNNI GEMV and it takes `w`: 4- or 8-bit codes
// in blocks of at least 32 (4-bit) or 16 (8-bit) elements, so that no
// int32 lane spans two blocks. SEQRT_CPU_VNNI=0 turns it off (to compare).
bool vnni_gemv_takes(const QuantizedWeights& w);

// X's rows quantized for the VNNI GEMV, in units of one 512-bit load of W
// (64 bytes: 128 4-bit codes or 64 8-bit ones). Codes in unit order (4-bit:
// each unit's even elements, then its odd ones, as the nibbles unpack;
// 8-bit: in order), the elements past the last whole unit in order; per row
// and block the scale xs. Per row, unit and int32 lane of vpdpbusd (16),
// what the lane needs: the scale xs of its block, −Σ xq of the codes it
// takes in (in the low 16 bits, for vpmaddwd with W's zero points), and
// that sum times W's fixed zero point 2^(bits-1).
struct VnniActivations {
  int64_t k = 0, unit = 0, k_units = 0;  // k_units: the elements in units
  std::vector<int8_t> codes;             // (rows, k)
  std::vector<float> scales;             // (rows, n_blocks)
  std::vector<float> lane_scales;        // (rows, k_units / unit, 16)
  std::vector<int32_t> lane_sums;        // (rows, k_units / unit, 16)
  std::vector<int32_t> lane_offsets;     // (rows, k_units / unit, 16)
};
VnniActivations vnni_activations(const float* src, int64_t rows,
                                 const QuantizedWeights& w);

// dst[r·ldd + j] for r in [r0, r0 + rows) (rows 1..4) and j in [n0, n1).
void vnni_gemv(const VnniActivations& x, int64_t r0, int64_t rows,
               const QuantizedWeights& w, int64_t n0, int64_t n1, float* dst,
               int64_t ldd);

}  // namespace seqrt::cpu
