// CPU kernels of IsNaN and IsInf: each float dtype classified by its bits
// (all exponent bits set: an infinity when the mantissa is zero, else a
// NaN), so f16 and bf16 need no widening and every dtype shares one loop.

#include "backends/cpu/kernel_table.h"
#include "backends/cpu/kernels/float_support.h"

namespace seqrt::cpu {
namespace {

enum class FloatClass { kNaN, kInf };

struct ClassQuery {
  FloatClass what;
  bool negative = true;  // IsInf: which infinities count
  bool positive = true;
};

// The layout of a float format stored in U.
template <typename U>
struct FloatBits {
  U sign;
  U exponent;  // every exponent bit
};

template <typename U>
void classify(const U* x, bool* y, int64_t n, FloatBits<U> bits,
              ClassQuery query) {
  const U magnitude_mask = static_cast<U>(~bits.sign);
  parallel_chunks(n, 65536, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const U magnitude = x[i] & magnitude_mask;
      if (query.what == FloatClass::kNaN) {
        y[i] = magnitude > bits.exponent;
      } else {
        const bool negative = (x[i] & bits.sign) != 0;
        y[i] = magnitude == bits.exponent &&
               (negative ? query.negative : query.positive);
      }
    }
  });
}

Status run_float_class(KernelContext& ctx, ClassQuery query) {
  const Tensor& x = *ctx.input(0);
  SEQRT_ASSIGN_OR_RETURN(Tensor * y,
                         ctx.allocate_output(0, DType::kBool, x.dims()));
  bool* out = y->mutable_data_as<bool>();
  const int64_t n = x.num_elements();
  switch (x.dtype()) {
    case DType::kF32:
      classify<uint32_t>(static_cast<const uint32_t*>(x.data()), out, n,
                         {0x80000000u, 0x7f800000u}, query);
      return Status::ok();
    case DType::kF64:
      classify<uint64_t>(static_cast<const uint64_t*>(x.data()), out, n,
                         {0x8000000000000000ull, 0x7ff0000000000000ull}, query);
      return Status::ok();
    case DType::kF16:
      classify<uint16_t>(static_cast<const uint16_t*>(x.data()), out, n,
                         {0x8000, 0x7c00}, query);
      return Status::ok();
    case DType::kBF16:
      classify<uint16_t>(static_cast<const uint16_t*>(x.data()), out, n,
                         {0x8000, 0x7f80}, query);
      return Status::ok();
    default:
      return ctx.error("input 'X' must be f32, f16, bf16 or f64, got {}",
                       dtype_name(x.dtype()));
  }
}

}  // namespace

void register_float_class_kernels(KernelTable& table) {
  table.add(CpuKernel{kOnnxDomain, "IsNaN",
                      [](KernelContext& ctx) {
                        return run_float_class(ctx, {FloatClass::kNaN});
                      },
                      nullptr});
  table.add(CpuKernel{kOnnxDomain, "IsInf",
                      [](KernelContext& ctx) {
                        return run_float_class(
                            ctx, {FloatClass::kInf,
                                  ctx.attr_int("detect_negative") != 0,
                                  ctx.attr_int("detect_positive") != 0});
                      },
                      nullptr});
}

}  // namespace seqrt::cpu
