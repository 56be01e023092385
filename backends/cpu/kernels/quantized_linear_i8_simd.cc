// The SIMD pieces of the quantized Linear with int8 activations
// (activation_bits 8, quantized_linear.h). Highway 1.0 has no 8-bit dot
// product, so codes and activations widen to int16 and meet in
// ReorderWidenMulAccumulate (vpmaddwd on x86: 2 products per int32 lane,
// twice the fp32 FMA's work per instruction); each block's integer sums
// are exact, converted once and scaled by W_scale·xs.
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/cpu/kernels/quantized_linear_i8_simd.cc"
#include <hwy/foreach_target.h>
#include <hwy/highway.h>
// clang-format on

#include <algorithm>

#include "backends/cpu/kernels/quantized_linear.h"
#include "ops/linalg/quantized_linear.h"

HWY_BEFORE_NAMESPACE();
namespace seqrt::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
// The float kernels' file has helpers of the same names in this namespace.
namespace i8 {
// Three widths, the widest whose chunk fits the block: 4-bit chunks of
// 64, 32 or 16 elements (32, 16 or 8 int16 lanes).
using DWide = hn::CappedTag<int16_t, 32>;
using DMid = hn::CappedTag<int16_t, 16>;
using DNarrow = hn::CappedTag<int16_t, 8>;

template <class D>
int64_t ChunkOf(D d, int64_t bits) {
  return (bits == 4 ? 2 : 1) * static_cast<int64_t>(hn::Lanes(d));
}

int64_t ChunkImpl(int64_t bits, int64_t block_size) {
  if (ChunkOf(DWide(), bits) <= block_size) return ChunkOf(DWide(), bits);
  if (ChunkOf(DMid(), bits) <= block_size) return ChunkOf(DMid(), bits);
  return ChunkOf(DNarrow(), bits);
}

}  // namespace i8

void I8PermuteImpl(const int8_t* x, int64_t k, int64_t bits, int64_t block_size,
                 int16_t* out) {
  permute_chunks(x, k, bits, i8::ChunkImpl(bits, block_size), out);
}

namespace i8 {

// One chunk's codes minus the zero point, as int16: the low nibbles (the
// even elements) in `lo`, the high ones in `hi`; 8-bit codes in `lo` only.
template <int kBits, class D, class V = hn::Vec<D>>
HWY_INLINE void Unpack(D d, const uint8_t* row, int64_t k, V zp, V& lo,
                       V& hi) {
  const hn::Rebind<uint8_t, D> d8;
  if (kBits == 4) {
    const V v = hn::PromoteTo(d, hn::LoadU(d8, row + k / 2));
    lo = hn::Sub(hn::And(v, hn::Set(d, 15)), zp);
    hi = hn::Sub(hn::ShiftRight<4>(v), zp);
  } else {
    lo = hn::Sub(hn::PromoteTo(d, hn::LoadU(d8, row + k)), zp);
    hi = lo;
  }
}

// R rows of quantized X (int16, chunk order) against W rows [n0, n1).
template <int kBits, int R, class D>
void GemvRows(D d, const int16_t* x, int64_t ldx, const float* xs,
              const QuantizedWeights& w, int64_t n0, int64_t n1, float* dst,
              int64_t ldd) {
  const hn::RepartitionToWide<D> d32;
  const hn::Repartition<float, decltype(d32)> df;
  using V32 = hn::Vec<decltype(d32)>;
  using VF = hn::Vec<decltype(df)>;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const int64_t chunk = (kBits == 4 ? 2 : 1) * lanes;
  const int64_t nb = w.n_blocks;
  const int32_t fixed_zp = default_zero_point(w.bits);
  for (int64_t j = n0; j < n1; ++j) {
    const uint8_t* row = w.codes + j * w.row_bytes;
    const float* scales = w.scales + j * nb;
    const uint8_t* zps = w.zero_points ? w.zero_points + j * nb : nullptr;
    VF total[R];
    float tail[R];
    for (int r = 0; r < R; ++r) {
      total[r] = hn::Zero(df);
      tail[r] = 0.0f;
    }
    for (int64_t b = 0; b < nb; ++b) {
      const int64_t k0 = b * w.block_size;
      const int64_t k1 = std::min(w.k, k0 + w.block_size);
      // The chunk is a power of 2: a mask, not a division, per block.
      const int64_t k_vec = k0 + ((k1 - k0) & ~(chunk - 1));
      const int32_t zp = zps ? zps[b] : fixed_zp;
      const auto vzp = hn::Set(d, static_cast<int16_t>(zp));
      V32 sum0[R], sum1[R];
      for (int r = 0; r < R; ++r) sum0[r] = sum1[r] = hn::Zero(d32);
      for (int64_t k = k0; k < k_vec; k += chunk) {
        hn::Vec<D> lo, hi;
        Unpack<kBits>(d, row, k, vzp, lo, hi);
        for (int r = 0; r < R; ++r) {
          const int16_t* xr = x + r * ldx + k;
          sum0[r] = hn::ReorderWidenMulAccumulate(d32, lo, hn::LoadU(d, xr),
                                                  sum0[r], sum1[r]);
          if (kBits == 4) {
            sum0[r] = hn::ReorderWidenMulAccumulate(
                d32, hi, hn::LoadU(d, xr + lanes), sum0[r], sum1[r]);
          }
        }
      }
      // The elements past the short last block's whole chunks.
      int32_t rest[R] = {};
      for (int64_t k = k_vec; k < k1; ++k) {
        const int32_t code = quantized_code(row, k, kBits) - zp;
        for (int r = 0; r < R; ++r) rest[r] += code * x[r * ldx + k];
      }
      for (int r = 0; r < R; ++r) {
        const float scale = scales[b] * xs[r * nb + b];
        const VF block = hn::ConvertTo(df, hn::Add(sum0[r], sum1[r]));
        total[r] = hn::MulAdd(hn::Set(df, scale), block, total[r]);
        tail[r] += scale * static_cast<float>(rest[r]);
      }
    }
    for (int r = 0; r < R; ++r) {
      dst[r * ldd + j] = hn::GetLane(hn::SumOfLanes(df, total[r])) + tail[r];
    }
  }
}

template <int kBits, class D>
void GemvBits(D d, const int16_t* x, int64_t ldx, const float* xs,
              int64_t rows, const QuantizedWeights& w, int64_t n0, int64_t n1,
              float* dst, int64_t ldd) {
  switch (rows) {
    case 1:
      return GemvRows<kBits, 1>(d, x, ldx, xs, w, n0, n1, dst, ldd);
    case 2:
      return GemvRows<kBits, 2>(d, x, ldx, xs, w, n0, n1, dst, ldd);
    case 3:
      return GemvRows<kBits, 3>(d, x, ldx, xs, w, n0, n1, dst, ldd);
    default:
      return GemvRows<kBits, 4>(d, x, ldx, xs, w, n0, n1, dst, ldd);
  }
}

template <class D>
void GemvWidth(D d, const int16_t* x, int64_t ldx, const float* xs,
               int64_t rows, const QuantizedWeights& w, int64_t n0, int64_t n1,
               float* dst, int64_t ldd) {
  if (w.bits == 4) {
    GemvBits<4>(d, x, ldx, xs, rows, w, n0, n1, dst, ldd);
  } else {
    GemvBits<8>(d, x, ldx, xs, rows, w, n0, n1, dst, ldd);
  }
}

}  // namespace i8

void I8GemvImpl(const int16_t* x, int64_t ldx, const float* xs, int64_t rows,
              const QuantizedWeights& w, int64_t n0, int64_t n1, float* dst,
              int64_t ldd) {
  const int64_t chunk = i8::ChunkImpl(w.bits, w.block_size);
  if (chunk == i8::ChunkOf(i8::DWide(), w.bits)) {
    i8::GemvWidth(i8::DWide(), x, ldx, xs, rows, w, n0, n1, dst, ldd);
  } else if (chunk == i8::ChunkOf(i8::DMid(), w.bits)) {
    i8::GemvWidth(i8::DMid(), x, ldx, xs, rows, w, n0, n1, dst, ldd);
  } else {
    i8::GemvWidth(i8::DNarrow(), x, ldx, xs, rows, w, n0, n1, dst, ldd);
  }
}

}  // namespace seqrt::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace seqrt::cpu {

HWY_EXPORT(I8PermuteImpl);
HWY_EXPORT(I8GemvImpl);

void permute_activation_codes(const int8_t* x, int64_t k, int64_t bits,
                              int64_t block_size, int16_t* out) {
  HWY_DYNAMIC_DISPATCH(I8PermuteImpl)(x, k, bits, block_size, out);
}

void quantized_gemv_i8(const int16_t* x, int64_t ldx, const float* xs,
                       int64_t rows, const QuantizedWeights& w, int64_t n0,
                       int64_t n1, float* dst, int64_t ldd) {
  HWY_DYNAMIC_DISPATCH(I8GemvImpl)(x, ldx, xs, rows, w, n0, n1, dst, ldd);
}

}  // namespace seqrt::cpu
#endif  // HWY_ONCE
