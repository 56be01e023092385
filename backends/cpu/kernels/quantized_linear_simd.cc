// The SIMD pieces of the quantized Linear (quantized_linear.h). Highway's
// dynamic dispatch: this file is compiled once per target by
// foreach_target.h, and HWY_DYNAMIC_DISPATCH picks the best at run time
// (the same target for every call, so the chunk order agrees between
// permute_activations and the kernels).
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/cpu/kernels/quantized_linear_simd.cc"
#include <hwy/foreach_target.h>
#include <hwy/highway.h>
// clang-format on

#include <algorithm>

#include "backends/cpu/kernels/quantized_linear.h"
#include "ops/linalg/quantized_linear.h"

HWY_BEFORE_NAMESPACE();
namespace seqrt::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
// Two widths: up to 16 float lanes (AVX-512) when a chunk fits the block,
// else at most 8 (a 4-bit chunk of two 8-lane vectors, 16 elements from 8
// bytes, fits the smallest block). The unpack is one widening load (u8 ->
// i32), an and, a shift, two converts.
using DWide = hn::CappedTag<float, 16>;
using DNarrow = hn::CappedTag<float, 8>;

template <class D>
int64_t ChunkOf(D d, int64_t bits) {
  return (bits == 4 ? 2 : 1) * static_cast<int64_t>(hn::Lanes(d));
}

bool UseWide(int64_t bits, int64_t block_size) {
  return ChunkOf(DWide(), bits) <= block_size;
}

int64_t ChunkImpl(int64_t bits, int64_t block_size) {
  return UseWide(bits, block_size) ? ChunkOf(DWide(), bits)
                                   : ChunkOf(DNarrow(), bits);
}

void PermuteImpl(const float* x, int64_t k, int64_t bits, int64_t block_size,
                 float* out) {
  permute_chunks(x, k, bits, ChunkImpl(bits, block_size), out);
}

// One chunk's codes as floats, minus `zp` when kSubZp: the low nibbles (the
// even elements) in `lo`, the high ones in `hi`; 8-bit codes in `lo` only.
template <int kBits, bool kSubZp, class D, class V = hn::Vec<D>,
          class VI = hn::Vec<hn::RebindToSigned<D>>>
HWY_INLINE void Unpack(D d, const uint8_t* row, int64_t k, VI zp, V& lo,
                       V& hi) {
  const hn::RebindToSigned<D> di;
  const hn::Rebind<uint8_t, D> d8;
  if (kBits == 4) {
    const VI v = hn::PromoteTo(di, hn::LoadU(d8, row + k / 2));
    VI low = hn::And(v, hn::Set(di, 15));
    VI high = hn::ShiftRight<4>(v);
    if (kSubZp) {
      low = hn::Sub(low, zp);
      high = hn::Sub(high, zp);
    }
    lo = hn::ConvertTo(d, low);
    hi = hn::ConvertTo(d, high);
  } else {
    VI v = hn::PromoteTo(di, hn::LoadU(d8, row + k));
    if (kSubZp) v = hn::Sub(v, zp);
    lo = hn::ConvertTo(d, v);
    hi = lo;
  }
}

// Row j's block b: [k0, k1), the end of its whole chunks, zero point, scale.
struct Block {
  int64_t k0, k1, k_vec;
  int32_t zp;
  float scale;
};

HWY_INLINE Block BlockOf(const QuantizedWeights& w, int64_t j, int64_t b,
                         int64_t chunk) {
  Block blk;
  blk.k0 = b * w.block_size;
  blk.k1 = std::min(w.k, blk.k0 + w.block_size);
  // The chunk is a power of 2: a mask, not a division, per block.
  blk.k_vec = blk.k0 + ((blk.k1 - blk.k0) & ~(chunk - 1));
  const int64_t at = j * w.n_blocks + b;
  blk.zp = w.zero_points ? w.zero_points[at] : default_zero_point(w.bits);
  blk.scale = w.scales[at];
  return blk;
}

// Σ_b scale_b·zp_b·sums[r][b] for R rows of block sums (ld n_blocks): the
// zero points' share of row j's dot products, taken out of the inner loop.
template <int R, class D>
HWY_INLINE void ZeroPointShare(D d, const QuantizedWeights& w, int64_t j,
                               const float* sums, float (&share)[R]) {
  using V = hn::Vec<D>;
  const hn::RebindToSigned<D> di;
  const hn::Rebind<uint8_t, D> d8;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const int64_t nb = w.n_blocks;
  const float* scales = w.scales + j * nb;
  const uint8_t* zps = w.zero_points ? w.zero_points + j * nb : nullptr;
  const float fixed_zp = default_zero_point(w.bits);
  V acc[R];
  for (int r = 0; r < R; ++r) acc[r] = hn::Zero(d);
  int64_t b = 0;
  for (; b + lanes <= nb; b += lanes) {
    const V zp =
        zps ? hn::ConvertTo(d, hn::PromoteTo(di, hn::LoadU(d8, zps + b)))
            : hn::Set(d, fixed_zp);
    const V sz = hn::Mul(hn::LoadU(d, scales + b), zp);
    for (int r = 0; r < R; ++r) {
      acc[r] = hn::MulAdd(sz, hn::LoadU(d, sums + r * nb + b), acc[r]);
    }
  }
  for (int r = 0; r < R; ++r) share[r] = hn::GetLane(hn::SumOfLanes(d, acc[r]));
  for (; b < nb; ++b) {
    const float sz = scales[b] * (zps ? static_cast<float>(zps[b]) : fixed_zp);
    for (int r = 0; r < R; ++r) share[r] += sz * sums[r * nb + b];
  }
}

// total[r] += scale · Σ x[r]·(code − zp) over the whole chunks of
// [k_begin, k_end): each chunk unpacked once for the R rows of X.
template <int kBits, bool kSubZp, int R, class D, class V = hn::Vec<D>>
HWY_INLINE void AccumulateBlock(D d, const uint8_t* row, const float* x,
                                int64_t ldx, int64_t k_begin, int64_t k_end,
                                int32_t zp, float scale, V (&total)[R]) {
  const hn::RebindToSigned<D> di;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const int64_t chunk = (kBits == 4 ? 2 : 1) * lanes;
  const auto vzp = hn::Set(di, zp);
  V part[R];
  for (int r = 0; r < R; ++r) part[r] = hn::Zero(d);
  for (int64_t k = k_begin; k < k_end; k += chunk) {
    V lo, hi;
    Unpack<kBits, kSubZp>(d, row, k, vzp, lo, hi);
    for (int r = 0; r < R; ++r) {
      const float* xr = x + r * ldx + k;
      part[r] = hn::MulAdd(lo, hn::LoadU(d, xr), part[r]);
      if (kBits == 4) {
        part[r] = hn::MulAdd(hi, hn::LoadU(d, xr + lanes), part[r]);
      }
    }
  }
  const V vscale = hn::Set(d, scale);
  for (int r = 0; r < R; ++r) total[r] = hn::MulAdd(vscale, part[r], total[r]);
}

// R rows of X against W rows [n0, n1): each chunk unpacked once, used by
// every row; each block's fp32 partial sum scaled once. 4-bit codes enter
// the sums as they are, and the zero points' share (small codes, no loss)
// is taken off once per row from X's block sums; 8-bit codes subtract
// their zero point first, so large codes cancel exactly.
template <int kBits, int R, class D>
void GemvRows(D d, const float* x, int64_t ldx, const float* block_sums,
              const QuantizedWeights& w, int64_t n0, int64_t n1, float* dst,
              int64_t ldd) {
  using V = hn::Vec<D>;
  constexpr bool kSubZp = kBits == 8;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const int64_t chunk = (kBits == 4 ? 2 : 1) * lanes;
  const int64_t whole_blocks = w.k / w.block_size;
  const int32_t fixed_zp = default_zero_point(w.bits);
  for (int64_t j = n0; j < n1; ++j) {
    const uint8_t* row = w.codes + j * w.row_bytes;
    V total[R];
    float tail[R];
    for (int r = 0; r < R; ++r) {
      total[r] = hn::Zero(d);
      tail[r] = 0.0f;
    }
    // The whole blocks: a fixed number of chunks, no tail.
    const float* scales = w.scales + j * w.n_blocks;
    const uint8_t* zps =
        w.zero_points ? w.zero_points + j * w.n_blocks : nullptr;
    int64_t k0 = 0;
    for (int64_t b = 0; b < whole_blocks; ++b, k0 += w.block_size) {
      const int32_t zp = !kSubZp ? 0 : zps ? zps[b] : fixed_zp;
      AccumulateBlock<kBits, kSubZp, R>(d, row, x, ldx, k0, k0 + w.block_size,
                                        zp, scales[b], total);
    }
    // The short last block, when block_size does not divide K: its whole
    // chunks, then the elements past them.
    if (whole_blocks < w.n_blocks) {
      const Block blk = BlockOf(w, j, whole_blocks, chunk);
      const int32_t zp = kSubZp ? blk.zp : 0;
      AccumulateBlock<kBits, kSubZp, R>(d, row, x, ldx, blk.k0, blk.k_vec, zp,
                                        blk.scale, total);
      for (int64_t k = blk.k_vec; k < blk.k1; ++k) {
        const float wk =
            static_cast<float>(quantized_code(row, k, kBits) - zp) * blk.scale;
        for (int r = 0; r < R; ++r) tail[r] += x[r * ldx + k] * wk;
      }
    }
    float share[R] = {};
    if (!kSubZp) ZeroPointShare<R>(d, w, j, block_sums, share);
    for (int r = 0; r < R; ++r) {
      dst[r * ldd + j] =
          hn::GetLane(hn::SumOfLanes(d, total[r])) + (tail[r] - share[r]);
    }
  }
}

template <int kBits, class D>
void GemvBits(D d, const float* x, int64_t ldx, const float* sums, int64_t rows,
              const QuantizedWeights& w, int64_t n0, int64_t n1, float* dst,
              int64_t ldd) {
  switch (rows) {
    case 1:
      return GemvRows<kBits, 1>(d, x, ldx, sums, w, n0, n1, dst, ldd);
    case 2:
      return GemvRows<kBits, 2>(d, x, ldx, sums, w, n0, n1, dst, ldd);
    case 3:
      return GemvRows<kBits, 3>(d, x, ldx, sums, w, n0, n1, dst, ldd);
    default:
      return GemvRows<kBits, 4>(d, x, ldx, sums, w, n0, n1, dst, ldd);
  }
}

template <class D>
void GemvWidth(D d, const float* x, int64_t ldx, const float* sums,
               int64_t rows, const QuantizedWeights& w, int64_t n0, int64_t n1,
               float* dst, int64_t ldd) {
  if (w.bits == 4) {
    GemvBits<4>(d, x, ldx, sums, rows, w, n0, n1, dst, ldd);
  } else {
    GemvBits<8>(d, x, ldx, sums, rows, w, n0, n1, dst, ldd);
  }
}

void GemvImpl(const float* x, int64_t ldx, const float* sums, int64_t rows,
              const QuantizedWeights& w, int64_t n0, int64_t n1, float* dst,
              int64_t ldd) {
  if (UseWide(w.bits, w.block_size)) {
    GemvWidth(DWide(), x, ldx, sums, rows, w, n0, n1, dst, ldd);
  } else {
    GemvWidth(DNarrow(), x, ldx, sums, rows, w, n0, n1, dst, ldd);
  }
}

// quantize_activation_block, vectorised: the same operations (max |x|, the
// scale most/127, its reciprocal, x·(1/xs) rounded half to even, clamped),
// so the same codes and scale; a block holding NaN or ±inf goes to it.
float QuantizeActivationImpl(const float* x, int64_t count, int8_t* codes) {
  const hn::ScalableTag<float> d;
  const hn::RebindToSigned<decltype(d)> di;
  const hn::Rebind<int8_t, decltype(d)> d8;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  auto most = hn::Zero(d);
  auto finite = hn::Eq(most, most);
  for (int64_t i = 0; i < count; i += lanes) {
    const auto valid = hn::FirstN(d, static_cast<size_t>(count - i));
    const auto v = hn::MaskedLoad(valid, d, x + i);
    finite = hn::And(finite, hn::IsFinite(v));
    most = hn::Max(most, hn::Abs(v));
  }
  if (!hn::AllTrue(d, finite))
    return quantize_activation_block(x, count, codes);
  const float scale = hn::GetLane(hn::MaxOfLanes(d, most)) / 127.0f;
  const auto inverse = hn::Set(d, scale != 0.0f ? 1.0f / scale : 0.0f);
  const auto low = hn::Set(d, -127.0f), high = hn::Set(d, 127.0f);
  HWY_ALIGN int8_t tail[hn::MaxLanes(d8)];
  for (int64_t i = 0; i < count; i += lanes) {
    const auto valid = hn::FirstN(d, static_cast<size_t>(count - i));
    const auto q = hn::Min(
        hn::Max(hn::Round(hn::Mul(hn::MaskedLoad(valid, d, x + i), inverse)),
                low),
        high);
    const auto packed = hn::DemoteTo(d8, hn::ConvertTo(di, q));
    if (i + lanes <= count) {
      hn::StoreU(packed, d8, codes + i);
    } else {
      hn::Store(packed, d8, tail);
      std::copy(tail, tail + (count - i), codes + i);
    }
  }
  return scale;
}

template <int kBits, class D>
void DequantizeBits(D d, const QuantizedWeights& w, int64_t n0, int64_t n1,
                    int64_t k0, int64_t k1, float* out, int64_t ld) {
  const hn::RebindToSigned<D> di;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const int64_t chunk = (kBits == 4 ? 2 : 1) * lanes;
  for (int64_t j = n0; j < n1; ++j) {
    const uint8_t* row = w.codes + j * w.row_bytes;
    float* out_row = out + (j - n0) * ld - k0;
    for (int64_t b = k0 / w.block_size; b * w.block_size < k1; ++b) {
      const Block blk = BlockOf(w, j, b, chunk);
      const auto zp = hn::Set(di, blk.zp);
      const auto scale = hn::Set(d, blk.scale);
      for (int64_t k = blk.k0; k < blk.k_vec; k += chunk) {
        hn::Vec<D> lo, hi;
        Unpack<kBits, true>(d, row, k, zp, lo, hi);
        hn::StoreU(hn::Mul(lo, scale), d, out_row + k);
        if (kBits == 4) hn::StoreU(hn::Mul(hi, scale), d, out_row + k + lanes);
      }
      for (int64_t k = blk.k_vec; k < blk.k1; ++k) {
        out_row[k] =
            static_cast<float>(quantized_code(row, k, kBits) - blk.zp) *
            blk.scale;
      }
    }
  }
}

template <class D>
void DequantizeWidth(D d, const QuantizedWeights& w, int64_t n0, int64_t n1,
                     int64_t k0, int64_t k1, float* out, int64_t ld) {
  if (w.bits == 4) {
    DequantizeBits<4>(d, w, n0, n1, k0, k1, out, ld);
  } else {
    DequantizeBits<8>(d, w, n0, n1, k0, k1, out, ld);
  }
}

void DequantizeImpl(const QuantizedWeights& w, int64_t n0, int64_t n1,
                    int64_t k0, int64_t k1, float* out, int64_t ld) {
  if (UseWide(w.bits, w.block_size)) {
    DequantizeWidth(DWide(), w, n0, n1, k0, k1, out, ld);
  } else {
    DequantizeWidth(DNarrow(), w, n0, n1, k0, k1, out, ld);
  }
}

}  // namespace seqrt::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace seqrt::cpu {

HWY_EXPORT(ChunkImpl);
HWY_EXPORT(PermuteImpl);
HWY_EXPORT(GemvImpl);
HWY_EXPORT(DequantizeImpl);
HWY_EXPORT(QuantizeActivationImpl);

int64_t quantized_chunk(int64_t bits, int64_t block_size) {
  return HWY_DYNAMIC_DISPATCH(ChunkImpl)(bits, block_size);
}

void permute_activations(const float* x, int64_t k, int64_t bits,
                         int64_t block_size, float* out) {
  HWY_DYNAMIC_DISPATCH(PermuteImpl)(x, k, bits, block_size, out);
}

void quantized_gemv(const float* x, int64_t ldx, const float* block_sums,
                    int64_t rows, const QuantizedWeights& w, int64_t n0,
                    int64_t n1, float* dst, int64_t ldd) {
  HWY_DYNAMIC_DISPATCH(GemvImpl)
  (x, ldx, block_sums, rows, w, n0, n1, dst, ldd);
}

void dequantize_tile(const QuantizedWeights& w, int64_t n0, int64_t n1,
                     int64_t k0, int64_t k1, float* out, int64_t ld) {
  HWY_DYNAMIC_DISPATCH(DequantizeImpl)(w, n0, n1, k0, k1, out, ld);
}

float quantize_activation_simd(const float* x, int64_t count, int8_t* codes) {
  return HWY_DYNAMIC_DISPATCH(QuantizeActivationImpl)(x, count, codes);
}

}  // namespace seqrt::cpu
#endif  // HWY_ONCE
