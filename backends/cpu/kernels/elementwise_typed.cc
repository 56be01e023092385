// Elementwise kernels in f64 and the integer dtypes (see the header). Each
// op is a functor instantiated per dtype, run over broadcast runs whose
// steps are 0 or 1, so the compiler vectorises the integer and double loops
// at -O2; chunks of runs go to the threads.
#include "backends/cpu/kernels/elementwise_typed.h"

#include <atomic>
#include <cmath>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "backends/cpu/float_io.h"
#include "backends/cpu/kernels/typed_support.h"
#include "ops/type_support.h"

namespace seqrt::cpu {
namespace {

constexpr int64_t kGrain = 16384;

template <typename T, typename F>
Result<Tensor> broadcast_binary(const KernelContext& ctx, const Tensor& a,
                                const Tensor& b, F f) {
  SEQRT_ASSIGN_OR_RETURN(BroadcastRuns plan,
                         plan_broadcast_runs(ctx, {a.dims(), b.dims()}));
  SEQRT_ASSIGN_OR_RETURN(Tensor out,
                         Tensor::allocate(dtype_of<T>(), plan.out_dims));
  const T* pa = a.data_as<T>();
  const T* pb = b.data_as<T>();
  T* po = out.mutable_data_as<T>();
  const int64_t length = plan.run_length();
  for_each_broadcast_run(plan, [&](const int64_t* offsets, int64_t o) {
    binary_run(pa + offsets[0], plan.step(0), pb + offsets[1], plan.step(1),
               po + o, length, f);
  });
  return out;
}

template <typename T>
T max_of(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a) || std::isnan(b))
      return std::numeric_limits<T>::quiet_NaN();
  }
  return a > b ? a : b;
}

template <typename T>
T min_of(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a) || std::isnan(b))
      return std::numeric_limits<T>::quiet_NaN();
  }
  return a < b ? a : b;
}

// Integer division truncates toward zero; lowest / -1 wraps to lowest.
template <typename T>
T divide(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return a / b;
  } else if constexpr (std::is_signed_v<T>) {
    return b == -1 ? wrap_sub<T>(0, a) : static_cast<T>(a / b);
  } else {
    return static_cast<T>(a / b);
  }
}

template <typename T>
bool has_zero(const Tensor& t) {
  const T* p = t.data_as<T>();
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    if (p[i] == 0) return true;
  }
  return false;
}

template <typename T>
Result<Tensor> binary_exact(const KernelContext& ctx, BinaryKind kind,
                            const Tensor& a, const Tensor& b) {
  constexpr bool kInt = std::is_integral_v<T>;
  switch (kind) {
    case BinaryKind::kAdd:
      return broadcast_binary<T>(ctx, a, b, [](T x, T y) -> T {
        if constexpr (kInt) return wrap_add(x, y);
        return x + y;
      });
    case BinaryKind::kSub:
      return broadcast_binary<T>(ctx, a, b, [](T x, T y) -> T {
        if constexpr (kInt) return wrap_sub(x, y);
        return x - y;
      });
    case BinaryKind::kMul:
      return broadcast_binary<T>(ctx, a, b, [](T x, T y) -> T {
        if constexpr (kInt) return wrap_mul(x, y);
        return x * y;
      });
    case BinaryKind::kDiv:
      if (kInt && a.num_elements() > 0 && has_zero<T>(b)) {
        return ctx.error("integer division by zero");
      }
      return broadcast_binary<T>(ctx, a, b, divide<T>);
    case BinaryKind::kMax:
      return broadcast_binary<T>(ctx, a, b, max_of<T>);
    case BinaryKind::kMin:
      return broadcast_binary<T>(ctx, a, b, min_of<T>);
  }
  return internal_error("{}: unknown binary kind", ctx.node().label());
}

Status check_exact_inputs(const KernelContext& ctx) {
  if (ctx.num_inputs() == 0) return ctx.error("needs at least one input");
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) return ctx.error("input {} is missing", i);
    if (ctx.input(i)->dtype() != ctx.input(0)->dtype()) {
      return ctx.error("input {} must be {} like input 0, got {}", i,
                       dtype_name(ctx.input(0)->dtype()),
                       dtype_name(ctx.input(i)->dtype()));
    }
  }
  return Status::ok();
}

// An integer power, exact (wrapping) for non-negative exponents; negative
// exponents give what truncating the real result gives (the reference's).
template <typename T>
T int_pow(T base, int64_t exponent) {
  if (exponent < 0) {
    bool odd = exponent % 2 != 0;
    return base == 1 ? 1 : base == -1 ? (odd ? -1 : 1) : 0;
  }
  T result = 1;
  while (exponent > 0) {
    if (exponent & 1) result = wrap_mul(result, base);
    base = wrap_mul(base, base);
    exponent >>= 1;
  }
  return result;
}

template <typename T>
Status pow_exact(KernelContext& ctx) {
  const Tensor& base = *ctx.input(0);
  const Tensor& exponent = *ctx.input(1);
  const bool exact = std::is_integral_v<T> && is_integer(exponent.dtype());
  // The exponent in the form the loop needs, whatever its dtype.
  std::vector<double> e_float(static_cast<size_t>(exponent.num_elements()));
  std::vector<int64_t> e_int(e_float.size());
  for (size_t i = 0; i < e_float.size(); ++i) {
    e_float[i] = exponent.element_f64(static_cast<int64_t>(i));
    e_int[i] = exponent.element_i64(static_cast<int64_t>(i));
  }
  SEQRT_ASSIGN_OR_RETURN(
      BroadcastRuns plan,
      plan_broadcast_runs(ctx, {base.dims(), exponent.dims()}));
  SEQRT_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocate_output(0, base.dtype(), plan.out_dims));
  const T* pb = base.data_as<T>();
  T* po = out->mutable_data_as<T>();
  const int64_t length = plan.run_length();
  std::atomic<bool> zero_to_negative{false};
  for_each_broadcast_run(plan, [&](const int64_t* offsets, int64_t o) {
    for (int64_t j = 0; j < length; ++j) {
      T x = pb[offsets[0] + j * plan.step(0)];
      size_t k = static_cast<size_t>(offsets[1] + j * plan.step(1));
      if constexpr (std::is_integral_v<T>) {
        if (exact) {
          if (x == 0 && e_int[k] < 0) zero_to_negative = true;
          po[o + j] = int_pow<T>(x, e_int[k]);
          continue;
        }
      }
      po[o + j] = from_f64<T>(std::pow(static_cast<double>(x), e_float[k]));
    }
  });
  if (zero_to_negative) {
    return ctx.error("integer 0 raised to a negative power");
  }
  return Status::ok();
}

// --- unary -----------------------------------------------------------------

constexpr double kSqrt2 = 1.4142135623730951;
constexpr double kSqrt2OverPi = 0.7978845608028654;

template <MathFn F>
double math_f64(double x) {
  if constexpr (F == MathFn::kRelu) return x > 0 ? x : 0.0;
  if constexpr (F == MathFn::kSigmoid) {
    if (x >= 0) return 1.0 / (1.0 + std::exp(-x));
    double e = std::exp(x);
    return e / (1.0 + e);
  }
  if constexpr (F == MathFn::kTanh) return std::tanh(x);
  if constexpr (F == MathFn::kExp) return std::exp(x);
  if constexpr (F == MathFn::kLog) return std::log(x);
  if constexpr (F == MathFn::kSqrt) return std::sqrt(x);
  if constexpr (F == MathFn::kNeg) return -x;
  if constexpr (F == MathFn::kAbs) return std::fabs(x);
  if constexpr (F == MathFn::kReciprocal) return 1.0 / x;
  if constexpr (F == MathFn::kErf) return std::erf(x);
  if constexpr (F == MathFn::kGeluExact) {
    return 0.5 * x * (1.0 + std::erf(x / kSqrt2));
  }
  if constexpr (F == MathFn::kGeluTanh) {
    return 0.5 * x *
           (1.0 + std::tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x)));
  }
  if constexpr (F == MathFn::kSoftplus) {
    return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
  }
  if constexpr (F == MathFn::kSign) {  // NaN and ±0 stay as they are
    if (x > 0) return 1.0;
    return x < 0 ? -1.0 : x;
  }
  if constexpr (F == MathFn::kSin) return std::sin(x);
  if constexpr (F == MathFn::kCos) return std::cos(x);
  if constexpr (F == MathFn::kFloor) return std::floor(x);
  if constexpr (F == MathFn::kCeil) return std::ceil(x);
  return x;
}

// The ops with an exact integer form; the rest go through double.
template <MathFn F, typename T>
T math_int(T x) {
  if constexpr (F == MathFn::kNeg) return wrap_sub<T>(0, x);
  if constexpr (F == MathFn::kAbs) {
    if constexpr (std::is_signed_v<T>) return x < 0 ? wrap_sub<T>(0, x) : x;
    return x;
  }
  if constexpr (F == MathFn::kSign) return static_cast<T>((x > 0) - (x < 0));
  if constexpr (F == MathFn::kRelu) return x > 0 ? x : T{0};
  return from_f64<T>(math_f64<F>(static_cast<double>(x)));
}

template <MathFn F, typename T>
void unary_loop(const T* x, T* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (std::is_integral_v<T>) {
      y[i] = math_int<F, T>(x[i]);
    } else {
      y[i] = static_cast<T>(math_f64<F>(static_cast<double>(x[i])));
    }
  }
}

template <MathFn F>
Status unary_with(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  const int64_t n = x.num_elements();
  if (is_f32_family(x.dtype())) {
    SEQRT_ASSIGN_OR_RETURN(Tensor in, load_f32(x));
    SEQRT_ASSIGN_OR_RETURN(Tensor out, Tensor::allocate(DType::kF32, x.dims()));
    const float* px = in.data_as<float>();
    float* py = out.mutable_data_as<float>();
    parallel_chunks(n, kGrain, [&](int64_t begin, int64_t end) {
      unary_loop<F, float>(px + begin, py + begin, end - begin);
    });
    return set_output_as(ctx, 0, out, x.dtype());
  }
  Status status = Status::ok();
  bool handled = visit_exact_numeric(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    Result<Tensor*> out = ctx.allocate_output(0, x.dtype(), x.dims());
    if (!out.is_ok()) {
      status = out.status();
      return;
    }
    const T* px = x.data_as<T>();
    T* py = (*out)->template mutable_data_as<T>();
    parallel_chunks(n, kGrain, [&](int64_t begin, int64_t end) {
      unary_loop<F, T>(px + begin, py + begin, end - begin);
    });
  });
  if (!handled) {
    return ctx.unsupported_error("{} input is not numeric",
                                 dtype_name(x.dtype()));
  }
  return status;
}

// --- Mod -------------------------------------------------------------------

template <typename T>
T c_remainder(T a, T b) {
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return 0;  // lowest % -1 is undefined in C++
  }
  return static_cast<T>(a % b);
}

template <typename T>
T floor_remainder(T a, T b) {
  T r = c_remainder(a, b);
  if constexpr (std::is_signed_v<T>) {
    if (r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
  }
  return r;
}

template <typename T>
Result<Tensor> mod_exact(const KernelContext& ctx, const Tensor& a,
                         const Tensor& b, bool c_style) {
  if constexpr (std::is_floating_point_v<T>) {
    return broadcast_binary<T>(ctx, a, b,
                               [](T x, T y) { return std::fmod(x, y); });
  } else {
    if (a.num_elements() > 0 && has_zero<T>(b)) {
      return ctx.error("integer modulo by zero");
    }
    if (c_style) return broadcast_binary<T>(ctx, a, b, c_remainder<T>);
    return broadcast_binary<T>(ctx, a, b, floor_remainder<T>);
  }
}

}  // namespace

Status run_exact_binary(KernelContext& ctx, BinaryKind kind) {
  SEQRT_RETURN_IF_ERROR(check_exact_inputs(ctx));
  const DType dtype = ctx.input(0)->dtype();
  Status status = Status::ok();
  bool handled = visit_exact_numeric(dtype, [&](auto tag) {
    using T = decltype(tag);
    Tensor acc = *ctx.input(0);
    if (ctx.num_inputs() == 1) acc = acc.clone();
    for (size_t i = 1; i < ctx.num_inputs() && status.is_ok(); ++i) {
      Result<Tensor> next = binary_exact<T>(ctx, kind, acc, *ctx.input(i));
      if (!next.is_ok()) {
        status = next.status();
        return;
      }
      acc = std::move(next).value();
    }
    ctx.set_output(0, std::move(acc));
  });
  if (!handled) {
    return ctx.unsupported_error("{} inputs are not numeric",
                                 dtype_name(dtype));
  }
  return status;
}

Status run_exact_pow(KernelContext& ctx) {
  const DType dtype = ctx.input(0)->dtype();
  switch (dtype) {
    case DType::kF64:
      return pow_exact<double>(ctx);
    case DType::kI32:
      return pow_exact<int32_t>(ctx);
    case DType::kI64:
      return pow_exact<int64_t>(ctx);
    default:
      return ctx.unsupported_error("{} base is not f64, i32 or i64",
                                   dtype_name(dtype));
  }
}

Status run_exact_unary(KernelContext& ctx, MathFn fn) {
  if (!ctx.has_input(0)) return ctx.error("input 0 is missing");
  switch (fn) {
    case MathFn::kRelu:
      return unary_with<MathFn::kRelu>(ctx);
    case MathFn::kSigmoid:
      return unary_with<MathFn::kSigmoid>(ctx);
    case MathFn::kTanh:
      return unary_with<MathFn::kTanh>(ctx);
    case MathFn::kExp:
      return unary_with<MathFn::kExp>(ctx);
    case MathFn::kLog:
      return unary_with<MathFn::kLog>(ctx);
    case MathFn::kSqrt:
      return unary_with<MathFn::kSqrt>(ctx);
    case MathFn::kNeg:
      return unary_with<MathFn::kNeg>(ctx);
    case MathFn::kAbs:
      return unary_with<MathFn::kAbs>(ctx);
    case MathFn::kReciprocal:
      return unary_with<MathFn::kReciprocal>(ctx);
    case MathFn::kErf:
      return unary_with<MathFn::kErf>(ctx);
    case MathFn::kGeluExact:
      return unary_with<MathFn::kGeluExact>(ctx);
    case MathFn::kGeluTanh:
      return unary_with<MathFn::kGeluTanh>(ctx);
    case MathFn::kSoftplus:
      return unary_with<MathFn::kSoftplus>(ctx);
    case MathFn::kSign:
      return unary_with<MathFn::kSign>(ctx);
    case MathFn::kSin:
      return unary_with<MathFn::kSin>(ctx);
    case MathFn::kCos:
      return unary_with<MathFn::kCos>(ctx);
    case MathFn::kFloor:
      return unary_with<MathFn::kFloor>(ctx);
    case MathFn::kCeil:
      return unary_with<MathFn::kCeil>(ctx);
  }
  return internal_error("{}: unknown unary function", ctx.node().label());
}

Status run_mod(KernelContext& ctx) {
  SEQRT_RETURN_IF_ERROR(check_exact_inputs(ctx));
  const Tensor& a = *ctx.input(0);
  const Tensor& b = *ctx.input(1);
  const int64_t fmod = ctx.attr_int("fmod");
  if (fmod != 0 && fmod != 1) {
    return ctx.error("attribute 'fmod' must be 0 or 1, got {}", fmod);
  }
  if (fmod == 0 && is_float(a.dtype())) {
    return ctx.error("{} inputs need fmod=1 (fmod=0 is for integers only)",
                     dtype_name(a.dtype()));
  }
  if (is_f32_family(a.dtype())) {
    // fmod is exact in any precision, so f32 gives the reference's result.
    SEQRT_ASSIGN_OR_RETURN(Tensor x, load_f32(a));
    SEQRT_ASSIGN_OR_RETURN(Tensor y, load_f32(b));
    SEQRT_ASSIGN_OR_RETURN(Tensor out, mod_exact<float>(ctx, x, y, true));
    return set_output_as(ctx, 0, out, a.dtype());
  }
  Status status = Status::ok();
  bool handled = visit_exact_numeric(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    Result<Tensor> out = mod_exact<T>(ctx, a, b, fmod == 1);
    if (!out.is_ok()) {
      status = out.status();
      return;
    }
    ctx.set_output(0, std::move(out).value());
  });
  if (!handled) {
    return ctx.unsupported_error("{} inputs are not numeric",
                                 dtype_name(a.dtype()));
  }
  return status;
}

}  // namespace seqrt::cpu
