// The VNNI GEMV of the int8-activation quantized Linear
// (quantized_linear_vnni.h). W is read a unit at a time, one 512-bit load
// per row of W (128 4-bit codes or 64 8-bit ones), and four rows of W share
// each load of X. Per unit and row of W: the codes unpacked (4-bit: an and,
// a shift and an and), one vpdpbusd per 64 codes, the int32 lanes converted
// and scaled by W_scale·xs of their block. Each 128-bit lane of a unit
// holds a quarter of it, which lies in one block (the block sizes
// vnni_gemv_takes), so the scales spread over the lanes by one permute.
// Each int32 lane starts from −zp·Σ xq of the codes it takes in, so the
// zero point's share is exact.
#include "backends/cpu/kernels/quantized_linear_vnni.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "ops/linalg/quantized_linear.h"

#if defined(__x86_64__)
// GCC 12's AVX-512 intrinsics pass an undefined vector as the unused
// pass-through operand, which -Wuninitialized reports once inlined here.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>
#define SEQRT_TARGET_VNNI \
  __attribute__((target("avx2,fma,avx512f,avx512vl,avx512bw,avx512vnni")))
#endif

namespace seqrt::cpu {
namespace {

bool cpu_has_vnni() {
#if defined(__x86_64__)
  static const bool has = [] {
    return cpu_kernel_enabled("SEQRT_CPU_VNNI") &&
           __builtin_cpu_supports("avx512vnni") &&
           __builtin_cpu_supports("avx512vl") &&
           __builtin_cpu_supports("avx512bw");
  }();
  return has;
#else
  return false;
#endif
}

// Elements per unit: one 64-byte load of W.
int64_t unit_of(int64_t bits) { return bits == 4 ? 128 : 64; }

// int32 lanes of a 512-bit vpdpbusd.
constexpr int64_t kLanes = 16;

// The block of int32 lane `lane` of unit u: each 128-bit lane (4 int32)
// covers a quarter of the unit; blocks are 2^block_shift elements.
int64_t lane_block(int64_t u, int64_t lane, int64_t unit, int block_shift) {
  return (u * unit + lane / 4 * (unit / 4)) >> block_shift;
}

}  // namespace

bool vnni_gemv_takes(const QuantizedWeights& w) {
  // Blocks are powers of two (the contract's), so from these sizes on every
  // 128-bit lane of a unit lies in one block.
  return cpu_has_vnni() && (w.bits == 4 || w.bits == 8) &&
         w.block_size >= (w.bits == 4 ? 32 : 16);
}

VnniActivations vnni_activations(const float* src, int64_t rows,
                                 const QuantizedWeights& w) {
  VnniActivations a;
  const int64_t k = w.k, nb = w.n_blocks;
  a.k = k;
  a.unit = unit_of(w.bits);
  a.k_units = k / a.unit * a.unit;
  const int64_t units = a.k_units / a.unit;
  a.codes.resize(static_cast<size_t>(rows * k));
  a.scales.resize(static_cast<size_t>(rows * nb));
  const auto lanes = static_cast<size_t>(rows * units * kLanes);
  a.lane_scales.resize(lanes);
  a.lane_sums.resize(lanes);
  a.lane_offsets.resize(lanes);
  const int32_t fixed_zp = default_zero_point(w.bits);
  const int block_shift = __builtin_ctzll(static_cast<uint64_t>(w.block_size));
  // The codes one lane takes in: 4 of the unit's first 64 bytes, for 4-bit
  // codes also the 4 at the same place in its second 64 (odd elements).
  const int64_t halves = w.bits == 4 ? 2 : 1;
  std::vector<int8_t> codes(static_cast<size_t>(k));
  for (int64_t r = 0; r < rows; ++r) {
    quantize_activation_row(src + r * k, w, codes.data(),
                            a.scales.data() + r * nb);
    int8_t* out = a.codes.data() + r * k;
    permute_chunks(codes.data(), a.k_units, w.bits, a.unit, out);
    std::copy(codes.begin() + a.k_units, codes.end(), out + a.k_units);
    for (int64_t u = 0; u < units; ++u) {
      for (int64_t l = 0; l < kLanes; ++l) {
        int32_t sum = 0;
        for (int64_t h = 0; h < halves; ++h) {
          for (int64_t e = 0; e < 4; ++e)
            sum += out[u * a.unit + h * 64 + 4 * l + e];
        }
        const auto at = static_cast<size_t>((r * units + u) * kLanes + l);
        a.lane_scales[at] =
            a.scales[r * nb + lane_block(u, l, a.unit, block_shift)];
        // |sum| <= 8·127: −sum fits the low 16 bits; the high ones stay 0
        // for vpmaddwd.
        a.lane_sums[at] = static_cast<uint16_t>(static_cast<int16_t>(-sum));
        a.lane_offsets[at] = -fixed_zp * sum;
      }
    }
  }
  return a;
}

#if defined(__x86_64__)
namespace {

// The int32 lane index of each block's first lane, for kBpu blocks per
// unit (4: one per 128-bit lane; 2: one per half; 1: one for all).
template <int kBpu>
SEQRT_TARGET_VNNI inline __m512i lane_index() {
  if (kBpu == 4) {
    return _mm512_set_epi32(3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0);
  }
  return _mm512_set_epi32(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0);
}

// kBpu consecutive block scales, each spread over its lanes.
template <int kBpu>
SEQRT_TARGET_VNNI inline __m512 spread_scales(const float* at) {
  if (kBpu == 1) return _mm512_set1_ps(*at);
  const __m128 v =
      kBpu == 4
          ? _mm_loadu_ps(at)
          : _mm_castpd_ps(_mm_load_sd(reinterpret_cast<const double*>(at)));
  return _mm512_permutexvar_ps(lane_index<kBpu>(), _mm512_castps128_ps512(v));
}

// kBpu consecutive zero points (bytes), each spread over its lanes as int32.
template <int kBpu>
SEQRT_TARGET_VNNI inline __m512i spread_zero_points(const uint8_t* at) {
  if (kBpu == 1) return _mm512_set1_epi32(*at);
  uint32_t bytes = 0;
  std::memcpy(&bytes, at, kBpu);
  const __m512i v =
      _mm512_cvtepu8_epi32(_mm_cvtsi32_si128(static_cast<int>(bytes)));
  return _mm512_permutexvar_epi32(lane_index<kBpu>(), v);
}

// Rows [r0, r0 + R) of X against W's rows [j0, j0 + NC): each unit of W
// loaded and unpacked once for the R rows, each load of X used by the NC
// rows of W. kOwnZp: W has zero points (vpmaddwd of X's lane sums and the
// zero points starts each lane), else X's lane offsets for the fixed one.
template <int kBits, int kBpu, bool kOwnZp, int R, int NC>
SEQRT_TARGET_VNNI void gemv_group(const VnniActivations& x, int64_t r0,
                                  const QuantizedWeights& w, int64_t j0,
                                  float* dst, int64_t ldd) {
  constexpr int64_t kUnit = kBits == 4 ? 128 : 64;
  const int64_t nb = w.n_blocks, k = x.k, units = x.k_units / kUnit;
  const int block_shift = __builtin_ctzll(static_cast<uint64_t>(w.block_size));
  const __m512i nibble = _mm512_set1_epi8(0x0F);
  const int8_t* xr[R];
  const float* xs[R];
  const float* lane_scales[R];
  const int32_t* lane_starts[R];
  for (int r = 0; r < R; ++r) {
    const int64_t lanes = (r0 + r) * units * kLanes;
    xr[r] = x.codes.data() + (r0 + r) * k;
    xs[r] = x.scales.data() + (r0 + r) * nb;
    lane_scales[r] = x.lane_scales.data() + lanes;
    lane_starts[r] =
        (kOwnZp ? x.lane_sums.data() : x.lane_offsets.data()) + lanes;
  }
  const WeightRows<NC> rows(w, j0);
  __m512 total[R][NC];
  for (int c = 0; c < NC; ++c) {
    for (int r = 0; r < R; ++r) total[r][c] = _mm512_setzero_ps();
  }
  for (int64_t u = 0; u < units; ++u) {
    const int64_t b0 = (u * kUnit) >> block_shift;
    __m512i lo[NC], hi[NC], zp[NC];
    __m512 w_scale[NC];
    for (int c = 0; c < NC; ++c) {
      const __m512i packed = _mm512_loadu_si512(rows.codes[c] + u * 64);
      prefetch_weights(rows.codes[c] + u * 64);
      if (kBits == 4) {
        lo[c] = _mm512_and_si512(packed, nibble);
        hi[c] = _mm512_and_si512(_mm512_srli_epi16(packed, 4), nibble);
      } else {
        lo[c] = packed;
      }
      w_scale[c] = spread_scales<kBpu>(rows.scales[c] + b0);
      if (kOwnZp) zp[c] = spread_zero_points<kBpu>(rows.zero_points[c] + b0);
    }
    for (int r = 0; r < R; ++r) {
      const int8_t* at = xr[r] + u * kUnit;
      const __m512i x_lo = _mm512_loadu_si512(at);
      const __m512i x_hi =
          kBits == 4 ? _mm512_loadu_si512(at + 64) : _mm512_setzero_si512();
      const __m512 x_scale = _mm512_loadu_ps(lane_scales[r] + u * kLanes);
      const __m512i start = _mm512_loadu_si512(lane_starts[r] + u * kLanes);
      for (int c = 0; c < NC; ++c) {
        __m512i acc = kOwnZp ? _mm512_madd_epi16(start, zp[c]) : start;
        acc = _mm512_dpbusd_epi32(acc, lo[c], x_lo);
        if (kBits == 4) acc = _mm512_dpbusd_epi32(acc, hi[c], x_hi);
        total[r][c] =
            _mm512_fmadd_ps(_mm512_cvtepi32_ps(acc),
                            _mm512_mul_ps(w_scale[c], x_scale), total[r][c]);
      }
    }
  }
  const int32_t fixed_zp = default_zero_point(w.bits);
  for (int c = 0; c < NC; ++c) {
    for (int r = 0; r < R; ++r) {
      float out = _mm512_reduce_add_ps(total[r][c]);
      // The elements past the last whole unit, zero point subtracted.
      for (int64_t i = x.k_units; i < k; ++i) {
        const int64_t b = i >> block_shift;
        const int32_t code = quantized_code(rows.codes[c], i, kBits) -
                             (kOwnZp ? rows.zero_points[c][b] : fixed_zp);
        out +=
            rows.scales[c][b] * xs[r][b] * static_cast<float>(code * xr[r][i]);
      }
      dst[r * ldd + j0 + c] = out;
    }
  }
}

template <int kBits, int kBpu, bool kOwnZp, int R>
void gemv_columns(const VnniActivations& x, int64_t r0,
                  const QuantizedWeights& w, int64_t n0, int64_t n1, float* dst,
                  int64_t ldd) {
  int64_t j = n0;
  for (; j + 4 <= n1; j += 4) {
    gemv_group<kBits, kBpu, kOwnZp, R, 4>(x, r0, w, j, dst, ldd);
  }
  for (; j < n1; ++j)
    gemv_group<kBits, kBpu, kOwnZp, R, 1>(x, r0, w, j, dst, ldd);
}

template <int kBits, int kBpu, bool kOwnZp>
void gemv_rows(const VnniActivations& x, int64_t r0, int64_t rows,
               const QuantizedWeights& w, int64_t n0, int64_t n1, float* dst,
               int64_t ldd) {
  switch (rows) {
    case 1:
      return gemv_columns<kBits, kBpu, kOwnZp, 1>(x, r0, w, n0, n1, dst, ldd);
    case 2:
      return gemv_columns<kBits, kBpu, kOwnZp, 2>(x, r0, w, n0, n1, dst, ldd);
    case 3:
      return gemv_columns<kBits, kBpu, kOwnZp, 3>(x, r0, w, n0, n1, dst, ldd);
    default:
      return gemv_columns<kBits, kBpu, kOwnZp, 4>(x, r0, w, n0, n1, dst, ldd);
  }
}

template <int kBits, int kBpu>
void gemv_zero_points(const VnniActivations& x, int64_t r0, int64_t rows,
                      const QuantizedWeights& w, int64_t n0, int64_t n1,
                      float* dst, int64_t ldd) {
  if (w.zero_points != nullptr) {
    gemv_rows<kBits, kBpu, true>(x, r0, rows, w, n0, n1, dst, ldd);
  } else {
    gemv_rows<kBits, kBpu, false>(x, r0, rows, w, n0, n1, dst, ldd);
  }
}

template <int kBits>
void gemv_bits(const VnniActivations& x, int64_t r0, int64_t rows,
               const QuantizedWeights& w, int64_t n0, int64_t n1, float* dst,
               int64_t ldd) {
  // Blocks per unit: 4, 2, or 1 (a block as large as the unit or larger).
  const int64_t per_unit = unit_of(kBits) / w.block_size;
  if (per_unit == 4) {
    gemv_zero_points<kBits, 4>(x, r0, rows, w, n0, n1, dst, ldd);
  } else if (per_unit == 2) {
    gemv_zero_points<kBits, 2>(x, r0, rows, w, n0, n1, dst, ldd);
  } else {
    gemv_zero_points<kBits, 1>(x, r0, rows, w, n0, n1, dst, ldd);
  }
}

}  // namespace

void vnni_gemv(const VnniActivations& x, int64_t r0, int64_t rows,
               const QuantizedWeights& w, int64_t n0, int64_t n1, float* dst,
               int64_t ldd) {
  if (w.bits == 4) {
    gemv_bits<4>(x, r0, rows, w, n0, n1, dst, ldd);
  } else {
    gemv_bits<8>(x, r0, rows, w, n0, n1, dst, ldd);
  }
}
#else
void vnni_gemv(const VnniActivations&, int64_t, int64_t,
               const QuantizedWeights&, int64_t, int64_t, float*, int64_t) {
  // vnni_gemv_takes() is false off x86-64, so nothing calls this.
  std::abort();
}
#endif

}  // namespace seqrt::cpu
