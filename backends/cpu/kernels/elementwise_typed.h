// The elementwise kernels for the dtypes the f32 kernels of elementwise.cc
// do not compute: f64 in double and the integers exactly in their own type
// (two's-complement wrapping as the reference), plus the unary ops that
// have no Highway loop (Sign, Sin, Cos, Floor, Ceil) for every float dtype.
#pragma once

#include "backends/cpu/kernels/elementwise_simd.h"
#include "ops/op_context.h"

namespace seqrt::cpu {

// Add, Sub, Mul, Div, Max, Min (and Sum as a fold of Add) over f64, i8, u8,
// i32 or i64 inputs, folded left to right with numpy broadcasting.
Status run_exact_binary(KernelContext& ctx, BinaryKind kind);

// Pow with an f64 or integer base (any numeric exponent).
Status run_exact_pow(KernelContext& ctx);

enum class MathFn {
  kRelu,
  kSigmoid,
  kTanh,
  kExp,
  kLog,
  kSqrt,
  kNeg,
  kAbs,
  kReciprocal,
  kErf,
  kGeluExact,
  kGeluTanh,
  kSoftplus,
  kSign,
  kSin,
  kCos,
  kFloor,
  kCeil,
};

// y = f(x) for every dtype the op accepts: floats through double as the
// reference (f32/f16/bf16 rounded back), integers exactly where the op has
// an integer form (Neg, Abs, Sign, Relu), else through double truncated.
Status run_exact_unary(KernelContext& ctx, MathFn fn);

// Mod with fmod 0 (integers, the divisor's sign) or 1 (C's fmod).
Status run_mod(KernelContext& ctx);

}  // namespace seqrt::cpu
