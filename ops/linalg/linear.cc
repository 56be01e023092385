// seqrt::Linear: Y = act(X·W + B) for X (..., K), W (K, N) and the optional
// bias B (N); Y is (..., N). What fuse_linear makes of MatMul+Add(+act), so
// the CPU backend can run it as one matmul primitive with the bias and the
// activation as post-ops. Activations: none, relu, gelu (erf), gelu_tanh,
// sigmoid, silu.
#include <cmath>

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

Status infer_linear(InferContext& ctx) {
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

Status run_linear(KernelContext& ctx) {
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
  s.doc = "act(X·W + B): a matmul with bias and activation";
  s.inputs = {{"X"}, {"W"}, {"B", true}};
  s.outputs = {{"Y"}};
  s.attrs = {
      AttrSpec{"activation",
               AttrType::kString,
               Attribute(std::string("none")),
               false,
               {"none", "relu", "gelu", "gelu_tanh", "sigmoid", "silu"}}};
  s.infer = infer_linear;
  s.reference = run_linear;
  register_or_die(registry, std::move(s));
}

}  // namespace seqrt
