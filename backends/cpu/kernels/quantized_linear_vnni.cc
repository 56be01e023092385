// The VNNI GEMV of the int8-activation quantized Linear
// (quantized_linear_vnni.h): per unit of W's row (64 4-bit codes or 32
// 8-bit ones, one 32-byte load) one or two vpdpbusd per row of X, the
// int32 sums converted and scaled by W_scale·xs. With 4-bit codes and
// blocks of 32 a unit spans two blocks: lanes 0-3 hold the first (bytes
// 0-15, its even and odd elements), lanes 4-7 the second. Each lane starts
// from −zp·Σ xq of the codes it takes in, so the zero point's share is
// exact.
#include "backends/cpu/kernels/quantized_linear_vnni.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "ops/linalg/quantized_linear.h"

#if defined(__x86_64__)
#include <immintrin.h>
#define SEQRT_TARGET_VNNI \
  __attribute__((target("avx2,fma,avx512f,avx512vl,avx512bw,avx512vnni")))
#endif

namespace seqrt::cpu {
namespace {

bool cpu_has_vnni() {
#if defined(__x86_64__)
  static const bool has = [] {
    const char* off = std::getenv("SEQRT_CPU_VNNI");
    if (off != nullptr && std::strcmp(off, "0") == 0) return false;
    return __builtin_cpu_supports("avx512vnni") &&
           __builtin_cpu_supports("avx512vl") &&
           __builtin_cpu_supports("avx512bw");
  }();
  return has;
#else
  return false;
#endif
}

int64_t unit_of(int64_t bits) { return bits == 4 ? 64 : 32; }

// int32 lanes of a 256-bit vpdpbusd.
constexpr int64_t kLanes = 8;

}  // namespace

bool vnni_gemv_takes(const QuantizedWeights& w) {
  return cpu_has_vnni() && (w.bits == 4 || w.bits == 8) && w.block_size >= 32;
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
  a.lane_offsets.assign(static_cast<size_t>(rows * units * kLanes), 0);
  const int32_t factor =
      w.zero_points ? -1 : -int32_t{default_zero_point(w.bits)};
  // The bytes one lane reads: 4 of the unit's first 32, for 4-bit codes
  // also the 4 of its second 32 (the odd elements).
  const int64_t halves = w.bits == 4 ? 2 : 1;
  std::vector<int8_t> codes(static_cast<size_t>(k));
  for (int64_t r = 0; r < rows; ++r) {
    quantize_activation_row(src + r * k, w, codes.data(),
                            a.scales.data() + r * nb);
    int8_t* out = a.codes.data() + r * k;
    permute_chunks(codes.data(), a.k_units, w.bits, a.unit, out);
    std::copy(codes.begin() + a.k_units, codes.end(), out + a.k_units);
    for (int64_t u = 0; u < units; ++u) {
      int32_t* lanes = a.lane_offsets.data() + (r * units + u) * kLanes;
      for (int64_t i = 0; i < 32 * halves; ++i) {
        lanes[(i % 32) / 4] += out[u * a.unit + i];
      }
      for (int64_t l = 0; l < kLanes; ++l) lanes[l] *= factor;
    }
  }
  return a;
}

#if defined(__x86_64__)
namespace {

SEQRT_TARGET_VNNI inline float sum_lanes(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

template <int kBits, int R>
SEQRT_TARGET_VNNI void gemv_rows(const VnniActivations& x, int64_t r0,
                                 const QuantizedWeights& w, int64_t n0,
                                 int64_t n1, float* dst, int64_t ldd) {
  const int64_t nb = w.n_blocks, k = x.k;
  constexpr int64_t kUnit = kBits == 4 ? 64 : 32;
  const bool split = w.block_size < kUnit;  // 4-bit units of two blocks
  const __m256i nibble = _mm256_set1_epi8(0x0F);
  const int8_t* xr[R];
  const float* xs[R];
  const int32_t* offsets[R];
  const int64_t units = x.k_units / kUnit;
  for (int r = 0; r < R; ++r) {
    xr[r] = x.codes.data() + (r0 + r) * k;
    xs[r] = x.scales.data() + (r0 + r) * nb;
    offsets[r] = x.lane_offsets.data() + (r0 + r) * units * kLanes;
  }
  const int32_t fixed_zp = default_zero_point(w.bits);
  for (int64_t j = n0; j < n1; ++j) {
    const uint8_t* row = w.codes + j * w.row_bytes;
    const float* ws = w.scales + j * nb;
    const uint8_t* zps = w.zero_points ? w.zero_points + j * nb : nullptr;
    // Two sums per row, for even and odd units: one chain of dependent
    // FMAs would bound the loop by their latency.
    __m256 total[2][R];
    for (int r = 0; r < R; ++r) {
      total[0][r] = total[1][r] = _mm256_setzero_ps();
    }
    for (int64_t u0 = 0, parity = 0; u0 < x.k_units;
         u0 += kUnit, parity ^= 1) {
      const __m256i packed = _mm256_loadu_si256(
          reinterpret_cast<const __m256i*>(row + u0 * kBits / 8));
      __m256i lo = packed, hi = packed;
      if (kBits == 4) {
        lo = _mm256_and_si256(packed, nibble);
        hi = _mm256_and_si256(_mm256_srli_epi16(packed, 4), nibble);
      }
      const int64_t b = u0 / w.block_size;
      // This unit's zero point per lane, when W has its own.
      __m256i zp = _mm256_setzero_si256();
      if (zps != nullptr) {
        zp = split ? _mm256_set_m128i(_mm_set1_epi32(zps[b + 1]),
                                      _mm_set1_epi32(zps[b]))
                   : _mm256_set1_epi32(zps[b]);
      }
      for (int r = 0; r < R; ++r) {
        const int8_t* at = xr[r] + u0;
        // −zp·Σ xq per lane to start from: the sums stay exact.
        __m256i acc = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(
            offsets[r] + (u0 / kUnit) * kLanes));
        if (zps != nullptr) acc = _mm256_mullo_epi32(acc, zp);
        acc = _mm256_dpbusd_epi32(
            acc, lo, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(at)));
        if (kBits == 4) {
          acc = _mm256_dpbusd_epi32(
              acc, hi,
              _mm256_loadu_si256(reinterpret_cast<const __m256i*>(at + 32)));
        }
        const __m256 scale =
            split ? _mm256_set_m128(_mm_set1_ps(ws[b + 1] * xs[r][b + 1]),
                                    _mm_set1_ps(ws[b] * xs[r][b]))
                  : _mm256_set1_ps(ws[b] * xs[r][b]);
        total[parity][r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(acc), scale,
                                           total[parity][r]);
      }
    }
    float out[R];
    for (int r = 0; r < R; ++r) {
      out[r] = sum_lanes(_mm256_add_ps(total[0][r], total[1][r]));
    }
    // The elements past the last whole unit, zero point subtracted.
    for (int64_t i = x.k_units; i < k; ++i) {
      const int64_t b = i / w.block_size;
      const int32_t code =
          quantized_code(row, i, kBits) - (zps ? zps[b] : fixed_zp);
      for (int r = 0; r < R; ++r) {
        out[r] += ws[b] * xs[r][b] * static_cast<float>(code * xr[r][i]);
      }
    }
    for (int r = 0; r < R; ++r) dst[r * ldd + j] = out[r];
  }
}

template <int kBits>
void gemv_bits(const VnniActivations& x, int64_t r0, int64_t rows,
               const QuantizedWeights& w, int64_t n0, int64_t n1, float* dst,
               int64_t ldd) {
  switch (rows) {
    case 1:
      return gemv_rows<kBits, 1>(x, r0, w, n0, n1, dst, ldd);
    case 2:
      return gemv_rows<kBits, 2>(x, r0, w, n0, n1, dst, ldd);
    case 3:
      return gemv_rows<kBits, 3>(x, r0, w, n0, n1, dst, ldd);
    default:
      return gemv_rows<kBits, 4>(x, r0, w, n0, n1, dst, ldd);
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
