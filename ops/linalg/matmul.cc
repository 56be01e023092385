// MatMul: numpy matmul. A 1-D A is treated as (1, K) and a 1-D B as (K, 1),
// with that dim dropped from the result; the batch dims (all but the last
// two) broadcast.
#include "ops/registry.h"
#include "ops/util.h"

namespace seqrt {
namespace {

// Dims of A and B after the 1-D promotion.
struct Promoted {
  std::vector<Dim> a, b;
  bool a_vector = false, b_vector = false;
};

Result<Promoted> promote(const OpContext& ctx, const Shape& a, const Shape& b) {
  if (a.rank() == 0 || b.rank() == 0) {
    return ctx.error("inputs must have rank >= 1, got {} and {}", a.to_string(),
                     b.to_string());
  }
  Promoted p{a.dims(), b.dims()};
  p.a_vector = a.rank() == 1;
  p.b_vector = b.rank() == 1;
  if (p.a_vector) p.a.insert(p.a.begin(), Dim(1));
  if (p.b_vector) p.b.push_back(Dim(1));
  const Dim& ka = p.a.back();
  const Dim& kb = p.b[p.b.size() - 2];
  if (ka.is_fixed() && kb.is_fixed() && ka != kb) {
    return ctx.error("inner dims differ: A is {}, B is {}", a.to_string(),
                     b.to_string());
  }
  return p;
}

// The result shape: broadcast batch dims, then M and N (unless dropped).
Result<Shape> result_shape(const OpContext& ctx, const Promoted& p) {
  Shape batch_a(std::vector<Dim>(p.a.begin(), p.a.end() - 2));
  Shape batch_b(std::vector<Dim>(p.b.begin(), p.b.end() - 2));
  SEQRT_ASSIGN_OR_RETURN(Shape out, broadcast_shapes(ctx, batch_a, batch_b));
  if (!p.a_vector) out.dims().push_back(p.a[p.a.size() - 2]);
  if (!p.b_vector) out.dims().push_back(p.b.back());
  return out;
}

Status check_dtypes(const OpContext& ctx, DType a, DType b) {
  if (a != b || a == DType::kBool) {
    return ctx.error("A and B must share one numeric dtype, got {} and {}",
                     dtype_name(a), dtype_name(b));
  }
  return Status::ok();
}

Status infer_matmul(InferContext& ctx) {
  DType dtype = ctx.input_dtype(0);
  SEQRT_RETURN_IF_ERROR(check_dtypes(ctx, dtype, ctx.input_dtype(1)));
  const std::optional<Shape>& a = ctx.input_shape(0);
  const std::optional<Shape>& b = ctx.input_shape(1);
  if (!a || !b) {
    ctx.set_output(0, dtype, std::nullopt);
    return Status::ok();
  }
  SEQRT_ASSIGN_OR_RETURN(Promoted p, promote(ctx, *a, *b));
  SEQRT_ASSIGN_OR_RETURN(Shape out, result_shape(ctx, p));
  ctx.set_output(0, dtype, std::move(out));
  return Status::ok();
}

Status run_matmul(KernelContext& ctx) {
  const Tensor& a = *ctx.input(0);
  const Tensor& b = *ctx.input(1);
  SEQRT_RETURN_IF_ERROR(check_dtypes(ctx, a.dtype(), b.dtype()));
  SEQRT_ASSIGN_OR_RETURN(Promoted p, promote(ctx, a.shape(), b.shape()));
  SEQRT_ASSIGN_OR_RETURN(Shape out_shape, result_shape(ctx, p));
  SEQRT_ASSIGN_OR_RETURN(
      Tensor * out, ctx.allocate_output(0, a.dtype(), out_shape.fixed_dims()));
  std::vector<int64_t> dims_a = Shape(p.a).fixed_dims();
  std::vector<int64_t> dims_b = Shape(p.b).fixed_dims();
  int64_t m = dims_a[dims_a.size() - 2], k = dims_a.back(), n = dims_b.back();
  std::vector<int64_t> batch_a(dims_a.begin(), dims_a.end() - 2);
  std::vector<int64_t> batch_b(dims_b.begin(), dims_b.end() - 2);
  SEQRT_ASSIGN_OR_RETURN(std::vector<int64_t> batch,
                         broadcast_dims(ctx, batch_a, batch_b));
  BroadcastIndexer indexer(batch, {batch_a, batch_b});
  SEQRT_ASSIGN_OR_RETURN(int64_t batches, checked_num_elements(batch));
  for (int64_t t = 0; t < batches; ++t) {
    int64_t base_a = indexer.input_index(0, t) * m * k;
    int64_t base_b = indexer.input_index(1, t) * k * n;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0.0;
        for (int64_t r = 0; r < k; ++r) {
          sum += a.element_f64(base_a + i * k + r) *
                 b.element_f64(base_b + r * n + j);
        }
        out->set_element_f64((t * m + i) * n + j, sum);
      }
    }
  }
  return Status::ok();
}

}  // namespace

void register_matmul(OpRegistry& registry) {
  OpSchema s;
  s.name = "MatMul";
  s.doc = "numpy matmul: batched, broadcast, with 1-D promotion";
  s.inputs = {{"A"}, {"B"}};
  s.outputs = {{"Y"}};
  s.infer = infer_matmul;
  s.reference = run_matmul;
  register_or_die(registry, std::move(s));
}

}  // namespace seqrt
