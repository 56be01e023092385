// Gemm: Y = alpha * A' * B' + beta * C, where A' is A (M,K) or its
// transpose (transA=1), B' is B (K,N) or its transpose (transB=1), and the
// optional C broadcasts (one way) to (M,N).
#include "ops/registry.h"
#include "ops/util.h"

namespace seqrt {
namespace {

// M, K, N from A and B (dims may be symbolic at inference time).
struct GemmDims {
  Dim m, k, n;
};

Result<GemmDims> gemm_dims(const OpContext& ctx, const Shape& a,
                           const Shape& b) {
  if (a.rank() != 2 || b.rank() != 2) {
    return ctx.error("A and B must be 2-D, got {} and {}", a.to_string(),
                     b.to_string());
  }
  bool trans_a = ctx.attr_int("transA") != 0;
  bool trans_b = ctx.attr_int("transB") != 0;
  GemmDims dims{trans_a ? a[1] : a[0], trans_a ? a[0] : a[1],
                trans_b ? b[0] : b[1]};
  const Dim& kb = trans_b ? b[1] : b[0];
  if (dims.k.is_fixed() && kb.is_fixed() && dims.k != kb) {
    return ctx.error(
        "inner dims differ: A is {} (transA={}), B is {} (transB={})",
        a.to_string(), trans_a ? 1 : 0, b.to_string(), trans_b ? 1 : 0);
  }
  if (!dims.k.is_fixed()) dims.k = kb;
  return dims;
}

// C must broadcast to (M, N) without changing that shape.
Status check_c(const OpContext& ctx, const Shape& c, const GemmDims& dims) {
  if (c.rank() > 2) {
    return ctx.error("C must have rank <= 2, got {}", c.to_string());
  }
  std::vector<Dim> target = {dims.m, dims.n};
  for (size_t i = 0; i < c.rank(); ++i) {
    const Dim& got = c[i];
    const Dim& want = target[2 - c.rank() + i];
    if (got.is_fixed() && want.is_fixed() && got.value() != 1 && got != want) {
      return ctx.error("C {} does not broadcast to ({},{})", c.to_string(),
                       dims.m.to_string(), dims.n.to_string());
    }
  }
  return Status::ok();
}

Status check_dtypes(const OpContext& ctx, DType a, DType b, DType c) {
  if (a != b || a == DType::kBool || (c != DType::kUndefined && c != a)) {
    return ctx.error("A, B and C must share one numeric dtype, got {}, {}, {}",
                     dtype_name(a), dtype_name(b), dtype_name(c));
  }
  return Status::ok();
}

Status infer_gemm(InferContext& ctx) {
  DType dtype = ctx.input_dtype(0);
  DType c_dtype = ctx.has_input(2) ? ctx.input_dtype(2) : DType::kUndefined;
  SEQRT_RETURN_IF_ERROR(check_dtypes(ctx, dtype, ctx.input_dtype(1), c_dtype));
  const std::optional<Shape>& a = ctx.input_shape(0);
  const std::optional<Shape>& b = ctx.input_shape(1);
  if (!a || !b) {
    // Y is 2-D whatever the inputs; M or N may still be known.
    bool trans_a = ctx.attr_int("transA") != 0;
    bool trans_b = ctx.attr_int("transB") != 0;
    Dim m = a && a->rank() == 2 ? (*a)[trans_a ? 1 : 0] : Dim::unknown();
    Dim n = b && b->rank() == 2 ? (*b)[trans_b ? 0 : 1] : Dim::unknown();
    ctx.set_output(0, dtype, Shape({m, n}));
    return Status::ok();
  }
  SEQRT_ASSIGN_OR_RETURN(GemmDims dims, gemm_dims(ctx, *a, *b));
  if (ctx.has_input(2) && ctx.input_shape(2)) {
    SEQRT_RETURN_IF_ERROR(check_c(ctx, *ctx.input_shape(2), dims));
  }
  ctx.set_output(0, dtype, Shape({dims.m, dims.n}));
  return Status::ok();
}

Status run_gemm(KernelContext& ctx) {
  const Tensor& a = *ctx.input(0);
  const Tensor& b = *ctx.input(1);
  const Tensor* c = ctx.input(2);
  SEQRT_RETURN_IF_ERROR(check_dtypes(ctx, a.dtype(), b.dtype(),
                                     c ? c->dtype() : DType::kUndefined));
  SEQRT_ASSIGN_OR_RETURN(GemmDims dims, gemm_dims(ctx, a.shape(), b.shape()));
  if (c) SEQRT_RETURN_IF_ERROR(check_c(ctx, c->shape(), dims));
  int64_t m = dims.m.value(), k = dims.k.value(), n = dims.n.value();
  SEQRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, a.dtype(), {m, n}));
  bool trans_a = ctx.attr_int("transA") != 0;
  bool trans_b = ctx.attr_int("transB") != 0;
  double alpha = ctx.attr_float("alpha");
  double beta = ctx.attr_float("beta");
  std::vector<int64_t> c_strides =
      c ? broadcast_strides(c->dims(), {m, n}) : std::vector<int64_t>{0, 0};
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0.0;
      for (int64_t r = 0; r < k; ++r) {
        double av = a.element_f64(trans_a ? r * m + i : i * k + r);
        double bv = b.element_f64(trans_b ? j * k + r : r * n + j);
        sum += av * bv;
      }
      double value = alpha * sum;
      if (c)
        value += beta * c->element_f64(i * c_strides[0] + j * c_strides[1]);
      y->set_element_f64(i * n + j, value);
    }
  }
  return Status::ok();
}

}  // namespace

void register_gemm(OpRegistry& registry) {
  OpSchema s;
  s.name = "Gemm";
  s.doc = "alpha * A' * B' + beta * C with optional transposes";
  s.inputs = {{"A"}, {"B"}, {"C", true}};
  s.outputs = {{"Y"}};
  s.attrs = {{"alpha", AttrType::kFloat, Attribute(1.0f)},
             {"beta", AttrType::kFloat, Attribute(1.0f)},
             {"transA", AttrType::kInt, Attribute(0)},
             {"transB", AttrType::kInt, Attribute(0)}};
  s.infer = infer_gemm;
  s.reference = run_gemm;
  register_or_die(registry, std::move(s));
}

}  // namespace seqrt
