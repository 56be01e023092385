#include "ops/linalg/quantized_linear.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace seqrt {
namespace {

bool is_float_activation(DType dtype) {
  return dtype == DType::kF32 || dtype == DType::kF16 || dtype == DType::kBF16;
}

// Checks that `shape` is (dims...) where known; `what` names the input.
Status check_dims(const OpContext& ctx, const char* what, const Shape* shape,
                  const std::vector<int64_t>& dims,
                  const std::string& expected) {
  if (shape == nullptr) return Status::ok();
  bool ok = shape->rank() == dims.size();
  for (size_t i = 0; ok && i < dims.size(); ++i) {
    const Dim& d = (*shape)[i];
    ok = !(d.is_fixed() && dims[i] >= 0 && d.value() != dims[i]);
  }
  if (ok) return Status::ok();
  std::string want = "(";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) want += ",";
    want += dims[i] >= 0 ? std::to_string(dims[i]) : "?";
  }
  want += ")";
  return ctx.error("{} must be {} = {}, got {}", what, expected, want,
                   shape->to_string());
}

}  // namespace

int64_t linear_bits(const OpContext& ctx) { return ctx.attr_int("bits"); }

int64_t linear_activation_bits(const OpContext& ctx) {
  return ctx.attr_int("activation_bits");
}

float quantize_activation_block(const float* x, int64_t count, int8_t* codes) {
  float most = 0.0f;
  bool finite = true;
  for (int64_t i = 0; i < count; ++i) {
    finite = finite && std::isfinite(x[i]);
    most = std::max(most, std::fabs(x[i]));
  }
  if (!finite) {
    // No code stands for NaN or ±inf: a NaN scale carries them into Y.
    std::fill(codes, codes + count, int8_t{0});
    return std::numeric_limits<float>::quiet_NaN();
  }
  const float scale = most / 127.0f;
  // The reciprocal, then a product per element: onnxruntime's rounding.
  const float inverse = scale != 0.0f ? 1.0f / scale : 0.0f;
  for (int64_t i = 0; i < count; ++i) {
    const float q = std::nearbyint(x[i] * inverse);
    codes[i] = static_cast<int8_t>(std::clamp(q, -127.0f, 127.0f));
  }
  return scale;
}

Result<QuantizedLinearDims> check_quantized_weight(const OpContext& ctx,
                                                   const LinearOperand& w,
                                                   const LinearOperand& scale,
                                                   const LinearOperand& zp) {
  QuantizedLinearDims q;
  q.bits = ctx.attr_int("bits");
  q.block_size = ctx.attr_int("block_size");
  q.k = ctx.attr_int("K");
  if (q.bits != 4 && q.bits != 8) {
    return ctx.error("bits must be 4 or 8 for quantized weights, got {}",
                     q.bits);
  }
  if (q.block_size < 16 || (q.block_size & (q.block_size - 1)) != 0) {
    return ctx.error("block_size must be a power of 2 >= 16, got {}",
                     q.block_size);
  }
  if (q.k < 1) return ctx.error("K must be >= 1, got {}", q.k);
  q.n_blocks = (q.k + q.block_size - 1) / q.block_size;
  q.row_bytes = quantized_row_bytes(q.k, q.bits);
  if (w.dtype != DType::kU8) {
    return ctx.error("quantized W (bits={}) must be u8, got {}", q.bits,
                     dtype_name(w.dtype));
  }
  if (!scale.present) {
    return ctx.error("quantized W (bits={}) needs W_scale (N, n_blocks)",
                     q.bits);
  }
  if (scale.dtype != DType::kF32) {
    return ctx.error("W_scale must be f32, got {}", dtype_name(scale.dtype));
  }
  if (zp.present && zp.dtype != DType::kU8) {
    return ctx.error("W_zero_point must be u8 (one code per entry), got {}",
                     dtype_name(zp.dtype));
  }
  if (w.shape != nullptr) {
    if (w.shape->rank() != 2) {
      return ctx.error("quantized W must be 2-D (N, {}), got {}", q.row_bytes,
                       w.shape->to_string());
    }
    if ((*w.shape)[0].is_fixed()) q.n = (*w.shape)[0].value();
  }
  if (q.n < 0 && scale.shape != nullptr && scale.shape->rank() == 2 &&
      (*scale.shape)[0].is_fixed()) {
    q.n = (*scale.shape)[0].value();
  }
  SEQRT_RETURN_IF_ERROR(check_dims(ctx, "quantized W", w.shape,
                                   {q.n, q.row_bytes},
                                   fmt::format("(N, ceil(K*{}/8))", q.bits)));
  SEQRT_RETURN_IF_ERROR(check_dims(ctx, "W_scale", scale.shape,
                                   {q.n, q.n_blocks}, "(N, ceil(K/block))"));
  if (zp.present) {
    SEQRT_RETURN_IF_ERROR(check_dims(ctx, "W_zero_point", zp.shape,
                                     {q.n, q.n_blocks}, "(N, ceil(K/block))"));
  }
  return q;
}

Result<QuantizedLinearDims> check_quantized_linear(
    const OpContext& ctx, const LinearOperand (&in)[kLinearInputCount]) {
  const LinearOperand& x = in[kLinearX];
  const LinearOperand& b = in[kLinearB];
  const int64_t bits = ctx.attr_int("bits");
  if (bits != 4 && bits != 8) {
    return ctx.error("bits must be 0 (float weights), 4 or 8, got {}", bits);
  }
  if (!is_float_activation(x.dtype)) {
    return ctx.error("X must be f32, f16 or bf16, got {}", dtype_name(x.dtype));
  }
  const int64_t activation_bits = linear_activation_bits(ctx);
  if (activation_bits != 0 && activation_bits != 8) {
    return ctx.error("activation_bits must be 0 (float X) or 8, got {}",
                     activation_bits);
  }
  if (b.present && b.dtype != x.dtype) {
    return ctx.error("B must share X's dtype {}, got {}", dtype_name(x.dtype),
                     dtype_name(b.dtype));
  }
  SEQRT_ASSIGN_OR_RETURN(
      QuantizedLinearDims q,
      check_quantized_weight(ctx, in[kLinearW], in[kLinearWScale],
                             in[kLinearWZeroPoint]));
  if (x.shape != nullptr) {
    if (x.shape->rank() < 1) {
      return ctx.error("X must have rank >= 1 (..., K), got {}",
                       x.shape->to_string());
    }
    const Dim& xk = (*x.shape)[x.shape->rank() - 1];
    if (xk.is_fixed() && xk.value() != q.k) {
      return ctx.error("X {} must end in K = {}", x.shape->to_string(), q.k);
    }
  }
  if (b.present) {
    SEQRT_RETURN_IF_ERROR(check_dims(ctx, "B", b.shape, {q.n}, "(N)"));
  }
  q.activation_bits = activation_bits;
  return q;
}

Result<QuantizedLinearDims> check_quantized_linear(const KernelContext& ctx) {
  LinearOperand in[kLinearInputCount];
  Shape shapes[kLinearInputCount];
  for (size_t i = 0; i < kLinearInputCount; ++i) {
    const Tensor* t = ctx.input(i);
    if (t == nullptr) continue;
    shapes[i] = t->shape();
    in[i] = {true, t->dtype(), &shapes[i]};
  }
  return check_quantized_linear(ctx, in);
}

}  // namespace seqrt
