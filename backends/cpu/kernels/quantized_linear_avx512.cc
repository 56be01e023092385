// The AVX-512 GEMVs with f32 activations (quantized_linear_avx512.h). 4-bit
// codes, per chunk of 32: its 16 bytes broadcast to the four 128-bit lanes
// and shifted per lane (vpsrlvd) so that each int32 lane's low nibble is
// one code, twice (the first 16 codes, then the second); the block's table
// (iota − zp)·scale; two vpermps and two FMAs per row of X.
#include "backends/cpu/kernels/quantized_linear_avx512.h"

#include <cstdlib>

#include "ops/linalg/quantized_linear.h"

#if defined(__x86_64__)
// GCC 12's AVX-512 intrinsics pass an undefined vector as the unused
// pass-through operand, which -Wuninitialized reports once inlined here.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>
#define SEQRT_TARGET_AVX512 __attribute__((target("avx2,fma,avx512f")))
#endif

namespace seqrt::cpu {
namespace {

constexpr int64_t kChunk = 32;

bool cpu_has_avx512() {
#if defined(__x86_64__)
  static const bool has = cpu_kernel_enabled("SEQRT_CPU_AVX512_GEMV") &&
                          __builtin_cpu_supports("avx512f");
  return has;
#else
  return false;
#endif
}

}  // namespace

bool avx512_gemv_takes(const QuantizedWeights& w) {
  return cpu_has_avx512() &&
         ((w.bits == 4 && w.block_size >= kChunk) || w.bits == 8);
}

void avx512_permute_4bit(const float* x, int64_t k, float* out) {
  const int64_t whole = k / kChunk * kChunk;
  for (int64_t c = 0; c < whole; c += kChunk) {
    for (int64_t l = 0; l < 16; ++l) {
      out[c + l] = x[c + 8 * (l % 4) + l / 4];
      out[c + 16 + l] = x[c + 8 * (l % 4) + 4 + l / 4];
    }
  }
  for (int64_t i = whole; i < k; ++i) out[i] = x[i];
}

#if defined(__x86_64__)
namespace {

// Rows [0, R) of X against W's rows [j0, j0 + NC) of 4-bit codes. kOwnZp:
// W has zero points, else the fixed 8.
template <int R, int NC, bool kOwnZp>
SEQRT_TARGET_AVX512 void table_group(const float* x, int64_t ldx,
                                     const QuantizedWeights& w, int64_t j0,
                                     float* dst, int64_t ldd) {
  const int64_t chunks = w.k / kChunk;
  const int block_shift = __builtin_ctzll(static_cast<uint64_t>(w.block_size));
  // Lane l takes nibble l / 4 of the chunk's int32 l % 4 (then nibble
  // 4 + l / 4).
  const __m512i shift_first =
      _mm512_set_epi32(12, 12, 12, 12, 8, 8, 8, 8, 4, 4, 4, 4, 0, 0, 0, 0);
  const __m512i shift_second =
      _mm512_add_epi32(shift_first, _mm512_set1_epi32(16));
  const __m512 iota =
      _mm512_set_ps(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
  const __m512 centred =
      _mm512_sub_ps(iota, _mm512_set1_ps(default_zero_point(4)));
  const WeightRows<NC> rows(w, j0);
  __m512 total[R][NC];
  for (int c = 0; c < NC; ++c) {
    for (int r = 0; r < R; ++r) total[r][c] = _mm512_setzero_ps();
  }
  for (int64_t q = 0; q < chunks; ++q) {
    const int64_t b = (q * kChunk) >> block_shift;
    for (int c = 0; c < NC; ++c) {
      const __m512i bytes = _mm512_broadcast_i32x4(_mm_loadu_si128(
          reinterpret_cast<const __m128i*>(rows.codes[c] + q * 16)));
      if ((q & 3) == 0) prefetch_weights(rows.codes[c] + q * 16);
      // (code − zp)·scale, rounded once, as the reference dequantises.
      const __m512 codes =
          kOwnZp ? _mm512_sub_ps(iota, _mm512_set1_ps(rows.zero_points[c][b]))
                 : centred;
      const __m512 table =
          _mm512_mul_ps(codes, _mm512_set1_ps(rows.scales[c][b]));
      const __m512 first =
          _mm512_permutexvar_ps(_mm512_srlv_epi32(bytes, shift_first), table);
      const __m512 second =
          _mm512_permutexvar_ps(_mm512_srlv_epi32(bytes, shift_second), table);
      for (int r = 0; r < R; ++r) {
        const float* xr = x + r * ldx + q * kChunk;
        total[r][c] = _mm512_fmadd_ps(first, _mm512_loadu_ps(xr), total[r][c]);
        total[r][c] =
            _mm512_fmadd_ps(second, _mm512_loadu_ps(xr + 16), total[r][c]);
      }
    }
  }
  const int32_t fixed_zp = default_zero_point(4);
  for (int c = 0; c < NC; ++c) {
    for (int r = 0; r < R; ++r) {
      float out = _mm512_reduce_add_ps(total[r][c]);
      // The elements past the last whole chunk.
      for (int64_t i = chunks * kChunk; i < w.k; ++i) {
        const int64_t b = i >> block_shift;
        const int32_t code = quantized_code(rows.codes[c], i, 4) -
                             (kOwnZp ? rows.zero_points[c][b] : fixed_zp);
        out += x[r * ldx + i] * (static_cast<float>(code) * rows.scales[c][b]);
      }
      dst[r * ldd + j0 + c] = out;
    }
  }
}

// Rows [0, R) of X against W's rows [j0, j0 + NC) of 8-bit codes: per 16
// codes one widening (the fixed zero point 128 off by flipping the sign
// bit, exact), a convert and an FMA per row of X into the block's partial
// sum, scaled once per block.
template <int R, int NC, bool kOwnZp>
SEQRT_TARGET_AVX512 void wide_group(const float* x, int64_t ldx,
                                    const QuantizedWeights& w, int64_t j0,
                                    float* dst, int64_t ldd) {
  const int64_t chunks_per_block = w.block_size / 16;
  const int64_t whole_blocks = w.k / w.block_size;
  const __m128i sign = _mm_set1_epi8(static_cast<char>(0x80));
  const WeightRows<NC> rows(w, j0);
  __m512 total[R][NC];
  for (int c = 0; c < NC; ++c) {
    for (int r = 0; r < R; ++r) total[r][c] = _mm512_setzero_ps();
  }
  for (int64_t b = 0; b < whole_blocks; ++b) {
    __m512 part[R][NC];
    __m512i zp[NC];
    for (int c = 0; c < NC; ++c) {
      if (kOwnZp) zp[c] = _mm512_set1_epi32(rows.zero_points[c][b]);
      for (int r = 0; r < R; ++r) part[r][c] = _mm512_setzero_ps();
    }
    for (int64_t q = b * chunks_per_block; q < (b + 1) * chunks_per_block;
         ++q) {
      for (int c = 0; c < NC; ++c) {
        const __m128i bytes = _mm_loadu_si128(
            reinterpret_cast<const __m128i*>(rows.codes[c] + q * 16));
        if ((q & 3) == 0) prefetch_weights(rows.codes[c] + q * 16);
        const __m512i centred =
            kOwnZp ? _mm512_sub_epi32(_mm512_cvtepu8_epi32(bytes), zp[c])
                   : _mm512_cvtepi8_epi32(_mm_xor_si128(bytes, sign));
        const __m512 codes = _mm512_cvtepi32_ps(centred);
        for (int r = 0; r < R; ++r) {
          part[r][c] = _mm512_fmadd_ps(
              codes, _mm512_loadu_ps(x + r * ldx + q * 16), part[r][c]);
        }
      }
    }
    for (int c = 0; c < NC; ++c) {
      const __m512 scale = _mm512_set1_ps(rows.scales[c][b]);
      for (int r = 0; r < R; ++r)
        total[r][c] = _mm512_fmadd_ps(part[r][c], scale, total[r][c]);
    }
  }
  const int32_t fixed_zp = default_zero_point(8);
  for (int c = 0; c < NC; ++c) {
    for (int r = 0; r < R; ++r) {
      float out = _mm512_reduce_add_ps(total[r][c]);
      for (int64_t i = whole_blocks * w.block_size; i < w.k; ++i) {
        const int64_t b = i / w.block_size;
        const int32_t code =
            rows.codes[c][i] - (kOwnZp ? rows.zero_points[c][b] : fixed_zp);
        out += x[r * ldx + i] * (static_cast<float>(code) * rows.scales[c][b]);
      }
      dst[r * ldd + j0 + c] = out;
    }
  }
}

template <int R, bool kOwnZp>
void gemv_columns(const float* x, int64_t ldx, const QuantizedWeights& w,
                  int64_t n0, int64_t n1, float* dst, int64_t ldd) {
  int64_t j = n0;
  if (w.bits == 8) {
    for (; j + 4 <= n1; j += 4)
      wide_group<R, 4, kOwnZp>(x, ldx, w, j, dst, ldd);
    for (; j < n1; ++j) wide_group<R, 1, kOwnZp>(x, ldx, w, j, dst, ldd);
    return;
  }
  for (; j + 4 <= n1; j += 4) table_group<R, 4, kOwnZp>(x, ldx, w, j, dst, ldd);
  for (; j < n1; ++j) table_group<R, 1, kOwnZp>(x, ldx, w, j, dst, ldd);
}

template <bool kOwnZp>
void gemv_rows(const float* x, int64_t ldx, int64_t rows,
               const QuantizedWeights& w, int64_t n0, int64_t n1, float* dst,
               int64_t ldd) {
  switch (rows) {
    case 1:
      return gemv_columns<1, kOwnZp>(x, ldx, w, n0, n1, dst, ldd);
    case 2:
      return gemv_columns<2, kOwnZp>(x, ldx, w, n0, n1, dst, ldd);
    case 3:
      return gemv_columns<3, kOwnZp>(x, ldx, w, n0, n1, dst, ldd);
    default:
      return gemv_columns<4, kOwnZp>(x, ldx, w, n0, n1, dst, ldd);
  }
}

}  // namespace

void avx512_gemv(const float* x, int64_t ldx, int64_t rows,
                 const QuantizedWeights& w, int64_t n0, int64_t n1, float* dst,
                 int64_t ldd) {
  if (w.zero_points != nullptr) {
    gemv_rows<true>(x, ldx, rows, w, n0, n1, dst, ldd);
  } else {
    gemv_rows<false>(x, ldx, rows, w, n0, n1, dst, ldd);
  }
}
#else
void avx512_gemv(const float*, int64_t, int64_t, const QuantizedWeights&,
                 int64_t, int64_t, float*, int64_t) {
  // avx512_gemv_takes() is false off x86-64, so nothing calls this.
  std::abort();
}
#endif

}  // namespace seqrt::cpu
