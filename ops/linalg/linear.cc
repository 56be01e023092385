// seqrt::Linear: Y = act(X·W + B) for X (..., K), W (K, N) and the optional
// bias B (N); Y is (..., N). What fuse_linear makes of MatMul+Add(+act), so
// the CPU backend can run it as one matmul primitive with the bias and the
// activation as post-ops. Activations: none, relu, gelu (erf), gelu_tanh,
// sigmoid, silu. With bits = 4 or 8, W is weight-only quantized
// (quantized_linear.h): the reference dequantises it exactly, then runs the
// same product.
#include <algorithm>
#include <cmath>

#include "ops/linalg/quantized_linear.h"
#include "ops/registry.h"
#include "ops/util.h"

namespace seqrt {
namespace {

bool is_linear_dtype(DType dtype) {
  return dtype == DType::kF32 || dtype == DType::kF16 || dtype == DType::kBF16;
}

Status check_dtypes(const OpContext& ctx, DType x, DType w, DType b) {
  if (!is_linear_dtype(x) || w != x || (b != DType::kUndefined && b != x)) {
    return ctx.error(
        "X, W and B must share one dtype of f32/f16/bf16, got {}, {}, {}",
        dtype_name(x), dtype_name(w), dtype_name(b));
  }
  return Status::ok();
}

// Y's shape from X (..., K), W (K, N) and B (N); dims may be symbolic.
Result<Shape> linear_shape(const OpContext& ctx, const Shape& x, const Shape& w,
                           const Shape* b) {
  if (x.rank() < 1) {
    return ctx.error("X must have rank >= 1 (..., K), got {}", x.to_string());
  }
  if (w.rank() != 2) {
    return ctx.error("W must be 2-D (K, N), got {}", w.to_string());
  }
  const Dim& k = x[x.rank() - 1];
  if (k.is_fixed() && w[0].is_fixed() && k != w[0]) {
    return ctx.error("X {} and W {} disagree on K", x.to_string(),
                     w.to_string());
  }
  if (b != nullptr &&
      (b->rank() != 1 ||
       ((*b)[0].is_fixed() && w[1].is_fixed() && (*b)[0] != w[1]))) {
    return ctx.error("B must be (N) = ({}), got {}", w[1].to_string(),
                     b->to_string());
  }
  Shape y = x;
  y[y.rank() - 1] = w[1];
  return y;
}

// The quantized form's operands as inference sees them.
Result<QuantizedLinearDims> infer_quantized(InferContext& ctx) {
  LinearOperand in[kLinearInputCount];
  for (size_t i = 0; i < kLinearInputCount; ++i) {
    in[i].present = ctx.has_input(i);
    if (!in[i].present) continue;
    in[i].dtype = ctx.input_dtype(i);
    const std::optional<Shape>& shape = ctx.input_shape(i);
    in[i].shape = shape ? &*shape : nullptr;
  }
  return check_quantized_linear(ctx, in);
}

// The float form takes no quantization inputs or int8 activations.
Status check_float_form(const OpContext& ctx, bool has_scale, bool has_zp) {
  if (has_scale || has_zp) {
    return ctx.error(
        "W_scale and W_zero_point belong to quantized weights; set bits to 4 "
        "or 8, or drop them");
  }
  if (linear_activation_bits(ctx) != 0) {
    return ctx.error(
        "activation_bits {} needs quantized weights (bits 4 or 8); float W "
        "takes activation_bits 0",
        linear_activation_bits(ctx));
  }
  return Status::ok();
}

Status infer_linear(InferContext& ctx) {
  const bool has_scale = ctx.has_input(kLinearWScale);
  const bool has_zp = ctx.has_input(kLinearWZeroPoint);
  if (linear_bits(ctx) != 0) {
    SEQRT_ASSIGN_OR_RETURN(QuantizedLinearDims q, infer_quantized(ctx));
    const std::optional<Shape>& x = ctx.input_shape(kLinearX);
    if (!x) {
      ctx.set_output(0, ctx.input_dtype(kLinearX), std::nullopt);
      return Status::ok();
    }
    Shape y = *x;
    const std::optional<Shape>& w = ctx.input_shape(kLinearW);
    y[y.rank() - 1] = q.n >= 0 ? Dim(q.n) : w ? (*w)[0] : Dim::unknown();
    ctx.set_output(0, ctx.input_dtype(kLinearX), std::move(y));
    return Status::ok();
  }
  SEQRT_RETURN_IF_ERROR(check_float_form(ctx, has_scale, has_zp));
  DType dtype = ctx.input_dtype(0);
  DType bias_dtype = ctx.has_input(2) ? ctx.input_dtype(2) : DType::kUndefined;
  SEQRT_RETURN_IF_ERROR(
      check_dtypes(ctx, dtype, ctx.input_dtype(1), bias_dtype));
  const std::optional<Shape>& x = ctx.input_shape(0);
  const std::optional<Shape>& w = ctx.input_shape(1);
  const std::optional<Shape>* b =
      ctx.has_input(2) ? &ctx.input_shape(2) : nullptr;
  if (!x || !w || (b != nullptr && !*b)) {
    ctx.set_output(0, dtype, std::nullopt);
    return Status::ok();
  }
  SEQRT_ASSIGN_OR_RETURN(
      Shape y, linear_shape(ctx, *x, *w, b != nullptr ? &**b : nullptr));
  ctx.set_output(0, dtype, std::move(y));
  return Status::ok();
}

double activate(const std::string& activation, double v) {
  if (activation == "relu") return v > 0.0 ? v : 0.0;
  if (activation == "gelu")
    return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
  if (activation == "gelu_tanh") {
    constexpr double kSqrt2OverPi = 0.7978845608028654;
    return 0.5 * v *
           (1.0 + std::tanh(kSqrt2OverPi * (v + 0.044715 * v * v * v)));
  }
  if (activation == "sigmoid") return 1.0 / (1.0 + std::exp(-v));
  if (activation == "silu") return v / (1.0 + std::exp(-v));
  return v;  // "none"; the schema allows nothing else
}

// activation_bits 8: each row of X quantized per block (quantize_activation_
// block), each block's dot product with (code − zp) exact in integers, then
// scaled by W_scale·xs.
void run_int8_activations(KernelContext& ctx, const QuantizedLinearDims& q,
                          const std::string& activation, Tensor& y) {
  const Tensor& x = *ctx.input(kLinearX);
  const Tensor* b = ctx.input(kLinearB);
  const uint8_t* codes = ctx.input(kLinearW)->data_as<uint8_t>();
  const float* scales = ctx.input(kLinearWScale)->data_as<float>();
  const Tensor* zp = ctx.input(kLinearWZeroPoint);
  const uint8_t* zps = zp ? zp->data_as<uint8_t>() : nullptr;
  const int64_t k = q.k, n = q.n;
  const int64_t rows = k == 0 ? 0 : x.num_elements() / k;
  std::vector<float> row(static_cast<size_t>(k));
  std::vector<int8_t> xq(static_cast<size_t>(k));
  std::vector<float> xs(static_cast<size_t>(q.n_blocks));
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t r = 0; r < k; ++r) {
      row[r] = static_cast<float>(x.element_f64(i * k + r));
    }
    for (int64_t blk = 0; blk < q.n_blocks; ++blk) {
      const int64_t k0 = blk * q.block_size;
      const int64_t count = std::min(q.block_size, k - k0);
      xs[blk] = quantize_activation_block(row.data() + k0, count,
                                          xq.data() + k0);
    }
    for (int64_t j = 0; j < n; ++j) {
      const uint8_t* w_row = codes + j * q.row_bytes;
      double sum = b ? b->element_f64(j) : 0.0;
      for (int64_t blk = 0; blk < q.n_blocks; ++blk) {
        const int64_t at = j * q.n_blocks + blk;
        const int64_t z = zps ? zps[at] : default_zero_point(q.bits);
        const int64_t k1 = std::min(k, (blk + 1) * q.block_size);
        int64_t dot = 0;
        for (int64_t r = blk * q.block_size; r < k1; ++r) {
          dot += (quantized_code(w_row, r, q.bits) - z) * xq[r];
        }
        sum += static_cast<double>(dot) * scales[at] * xs[blk];
      }
      y.set_element_f64(i * n + j, activate(activation, sum));
    }
  }
}

// The quantized form: W dequantised exactly (the contract's formula), then
// the same product as the float form.
Status run_quantized_linear(KernelContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(QuantizedLinearDims q, check_quantized_linear(ctx));
  const Tensor& x = *ctx.input(kLinearX);
  const Tensor& w = *ctx.input(kLinearW);
  const Tensor* b = ctx.input(kLinearB);
  const Tensor& scale = *ctx.input(kLinearWScale);
  const Tensor* zp = ctx.input(kLinearWZeroPoint);
  std::vector<int64_t> y_dims = x.dims();
  y_dims.back() = q.n;
  SEQRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), y_dims));
  const std::string& activation = ctx.attr_string("activation");
  if (q.activation_bits == 8) {
    run_int8_activations(ctx, q, activation, *y);
    return Status::ok();
  }
  const int64_t k = q.k, n = q.n;
  std::vector<double> w_real(static_cast<size_t>(k * n));
  const uint8_t* codes = w.data_as<uint8_t>();
  const float* scales = scale.data_as<float>();
  const uint8_t* zps = zp ? zp->data_as<uint8_t>() : nullptr;
  for (int64_t j = 0; j < n; ++j) {
    const uint8_t* row = codes + j * q.row_bytes;
    for (int64_t r = 0; r < k; ++r) {
      const int64_t blk = j * q.n_blocks + r / q.block_size;
      const double z = zps ? zps[blk] : default_zero_point(q.bits);
      w_real[r * n + j] = (quantized_code(row, r, q.bits) - z) * scales[blk];
    }
  }
  const int64_t rows = k == 0 ? 0 : x.num_elements() / k;
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double sum = b ? b->element_f64(j) : 0.0;
      for (int64_t r = 0; r < k; ++r) {
        sum += x.element_f64(i * k + r) * w_real[r * n + j];
      }
      y->set_element_f64(i * n + j, activate(activation, sum));
    }
  }
  return Status::ok();
}

Status run_linear(KernelContext& ctx) {
  if (linear_bits(ctx) != 0) return run_quantized_linear(ctx);
  SEQRT_RETURN_IF_ERROR(check_float_form(ctx, ctx.has_input(kLinearWScale),
                                         ctx.has_input(kLinearWZeroPoint)));
  const Tensor& x = *ctx.input(0);
  const Tensor& w = *ctx.input(1);
  const Tensor* b = ctx.input(2);
  SEQRT_RETURN_IF_ERROR(check_dtypes(ctx, x.dtype(), w.dtype(),
                                     b ? b->dtype() : DType::kUndefined));
  Shape b_shape = b ? b->shape() : Shape();
  SEQRT_ASSIGN_OR_RETURN(Shape y_shape, linear_shape(ctx, x.shape(), w.shape(),
                                                     b ? &b_shape : nullptr));
  SEQRT_ASSIGN_OR_RETURN(
      Tensor * y, ctx.allocate_output(0, x.dtype(), y_shape.fixed_dims()));
  const std::string& activation = ctx.attr_string("activation");
  const int64_t k = w.dim(0), n = w.dim(1);
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < x.rank(); ++d) rows *= x.dim(d);
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double sum = b ? b->element_f64(j) : 0.0;
      for (int64_t r = 0; r < k; ++r) {
        sum += x.element_f64(i * k + r) * w.element_f64(r * n + j);
      }
      y->set_element_f64(i * n + j, activate(activation, sum));
    }
  }
  return Status::ok();
}

}  // namespace

void register_linear(OpRegistry& registry) {
  OpSchema s;
  s.domain = kSeqrtDomain;
  s.name = "Linear";
  s.doc =
      "act(X·W + B): a matmul with bias and activation; with bits 4 or 8, W "
      "is weight-only quantized (ops/linalg/quantized_linear.h)";
  s.inputs = {
      {"X"}, {"W"}, {"B", true}, {"W_scale", true}, {"W_zero_point", true}};
  s.outputs = {{"Y"}};
  s.attrs = {AttrSpec{"activation",
                      AttrType::kString,
                      Attribute(std::string("none")),
                      false,
                      {"none", "relu", "gelu", "gelu_tanh", "sigmoid", "silu"}},
             // 0: float W (K, N); 4 or 8: quantized W (N, ceil(K·bits/8)).
             AttrSpec{"bits", AttrType::kInt, Attribute(int64_t{0})},
             AttrSpec{"block_size", AttrType::kInt, Attribute(int64_t{32})},
             // 8: int8 activations per block (quantized_linear.h); 0: float.
             AttrSpec{"activation_bits", AttrType::kInt, Attribute(int64_t{0})},
             AttrSpec{"K", AttrType::kInt, Attribute(int64_t{0})}};
  s.infer = infer_linear;
  s.reference = run_linear;
  register_or_die(registry, std::move(s));
}

}  // namespace seqrt
