// MatMulInteger (opset 10) and QLinearMatMul (opset 21): numpy matmul of
// u8/i8 matrices less their zero points, accumulated exactly in int32.
// A zero point (and, for QLinearMatMul, a scale) is one for the tensor or
// one per row of A (length M) / per column of B (length N).
// QLinearMatMul requantizes: y = clamp(round(acc * (a_scale * b_scale /
// y_scale)) + y_zero_point), the scale product in the scales' dtype, the
// rest in f64, rounding half to even, as ONNX's reference does.
#include <algorithm>
#include <cmath>

#include "ops/quantize/quantize.h"
#include "ops/registry.h"
#include "ops/type_support.h"
#include "ops/util.h"

namespace seqrt {
namespace {

constexpr DTypeSet kByteTypes{DType::kI8, DType::kU8};

// The result shape of numpy matmul (1-D operands promoted, batch dims
// broadcast); unknown where either rank is.
Result<std::optional<Shape>> matmul_shape(const OpContext& ctx,
                                          const std::optional<Shape>& a,
                                          const std::optional<Shape>& b) {
  if (!a || !b) return std::optional<Shape>();
  if (a->rank() == 0 || b->rank() == 0) {
    return ctx.error("A and B must have rank >= 1, got {} and {}",
                     a->to_string(), b->to_string());
  }
  std::vector<Dim> da = a->dims(), db = b->dims();
  if (da.size() == 1) da.insert(da.begin(), Dim(1));
  if (db.size() == 1) db.push_back(Dim(1));
  const Dim& ka = da.back();
  const Dim& kb = db[db.size() - 2];
  if (ka.is_fixed() && kb.is_fixed() && ka != kb) {
    return ctx.error("inner dims differ: A is {}, B is {}", a->to_string(),
                     b->to_string());
  }
  SEQRT_ASSIGN_OR_RETURN(
      Shape out,
      broadcast_shapes(ctx, Shape(std::vector<Dim>(da.begin(), da.end() - 2)),
                       Shape(std::vector<Dim>(db.begin(), db.end() - 2))));
  if (a->rank() > 1) out.dims().push_back(da[da.size() - 2]);
  if (b->rank() > 1) out.dims().push_back(db.back());
  return std::optional<Shape>(std::move(out));
}

// One value per tensor, per row of A or per column of B.
Status check_vector(const OpContext& ctx, const char* what, const Tensor* t,
                    int64_t length) {
  if (t == nullptr || t->num_elements() == 1) return Status::ok();
  if (t->rank() == 1 && t->dim(0) == length) return Status::ok();
  return ctx.error("{} must have 1 or {} elements, got dims {}", what, length,
                   dims_to_string(t->dims()));
}

double at(const Tensor* t, int64_t index) {
  if (t == nullptr) return 0.0;
  return t->element_f64(t->num_elements() == 1 ? 0 : index);
}

// acc(t, i, j) for every output element, with the zero points removed;
// `store` receives (flat output index, row, column, accumulator).
template <typename Store>
Status integer_matmul(const KernelContext& ctx, const Tensor& a,
                      const Tensor& b, const Tensor* a_zero,
                      const Tensor* b_zero, const char* a_zero_name,
                      const char* b_zero_name, Store store) {
  std::vector<int64_t> da = a.dims(), db = b.dims();
  if (da.size() == 1) da.insert(da.begin(), 1);
  if (db.size() == 1) db.push_back(1);
  const int64_t m = da[da.size() - 2], k = da.back(), n = db.back();
  SEQRT_RETURN_IF_ERROR(check_vector(ctx, a_zero_name, a_zero, m));
  SEQRT_RETURN_IF_ERROR(check_vector(ctx, b_zero_name, b_zero, n));
  std::vector<int64_t> batch_a(da.begin(), da.end() - 2);
  std::vector<int64_t> batch_b(db.begin(), db.end() - 2);
  SEQRT_ASSIGN_OR_RETURN(std::vector<int64_t> batch,
                         broadcast_dims(ctx, batch_a, batch_b));
  BroadcastIndexer indexer(batch, {batch_a, batch_b});
  SEQRT_ASSIGN_OR_RETURN(int64_t batches, checked_num_elements(batch));
  for (int64_t t = 0; t < batches; ++t) {
    const int64_t base_a = indexer.input_index(0, t) * m * k;
    const int64_t base_b = indexer.input_index(1, t) * k * n;
    for (int64_t i = 0; i < m; ++i) {
      const auto za = static_cast<int32_t>(at(a_zero, i));
      for (int64_t j = 0; j < n; ++j) {
        const auto zb = static_cast<int32_t>(at(b_zero, j));
        int32_t acc = 0;
        for (int64_t r = 0; r < k; ++r) {
          acc +=
              (static_cast<int32_t>(a.element_i64(base_a + i * k + r)) - za) *
              (static_cast<int32_t>(b.element_i64(base_b + r * n + j)) - zb);
        }
        store((t * m + i) * n + j, i, j, acc);
      }
    }
  }
  return Status::ok();
}

Status infer_matmul_integer(InferContext& ctx) {
  SEQRT_RETURN_IF_ERROR(
      check_input_dtype(ctx, "input 'A'", ctx.input_dtype(0), kByteTypes));
  SEQRT_RETURN_IF_ERROR(
      check_input_dtype(ctx, "input 'B'", ctx.input_dtype(1), kByteTypes));
  if (ctx.has_input(2)) {
    SEQRT_RETURN_IF_ERROR(check_same_dtype(ctx, "input 'A'", ctx.input_dtype(0),
                                           "input 'a_zero_point'",
                                           ctx.input_dtype(2)));
  }
  if (ctx.has_input(3)) {
    SEQRT_RETURN_IF_ERROR(check_same_dtype(ctx, "input 'B'", ctx.input_dtype(1),
                                           "input 'b_zero_point'",
                                           ctx.input_dtype(3)));
  }
  SEQRT_ASSIGN_OR_RETURN(
      std::optional<Shape> out,
      matmul_shape(ctx, ctx.input_shape(0), ctx.input_shape(1)));
  ctx.set_output(0, DType::kI32, std::move(out));
  return Status::ok();
}

enum QLinearInput { kA, kAScale, kAZero, kB, kBScale, kBZero, kYScale, kYZero };

Status infer_qlinear_matmul(InferContext& ctx) {
  SEQRT_RETURN_IF_ERROR(
      check_input_dtype(ctx, "input 'a'", ctx.input_dtype(kA), kByteTypes));
  SEQRT_RETURN_IF_ERROR(
      check_input_dtype(ctx, "input 'b'", ctx.input_dtype(kB), kByteTypes));
  SEQRT_RETURN_IF_ERROR(check_input_dtype(ctx, "input 'y_zero_point'",
                                          ctx.input_dtype(kYZero), kByteTypes));
  SEQRT_RETURN_IF_ERROR(check_same_dtype(ctx, "input 'a'", ctx.input_dtype(kA),
                                         "input 'a_zero_point'",
                                         ctx.input_dtype(kAZero)));
  SEQRT_RETURN_IF_ERROR(check_same_dtype(ctx, "input 'b'", ctx.input_dtype(kB),
                                         "input 'b_zero_point'",
                                         ctx.input_dtype(kBZero)));
  for (int i : {kAScale, kBScale, kYScale}) {
    SEQRT_RETURN_IF_ERROR(
        check_input_dtype(ctx, "the scales", ctx.input_dtype(i),
                          DTypeSet{DType::kF32, DType::kF16, DType::kBF16}));
  }
  SEQRT_ASSIGN_OR_RETURN(
      std::optional<Shape> out,
      matmul_shape(ctx, ctx.input_shape(kA), ctx.input_shape(kB)));
  ctx.set_output(0, ctx.input_dtype(kYZero), std::move(out));
  return Status::ok();
}

// Rounds `value` to `dtype` (f32, f16 or bf16), as numpy arithmetic in that
// dtype does after each operation.
double round_to(DType dtype, double value) {
  const auto f = static_cast<float>(value);
  if (dtype == DType::kF16) return f16_to_f32(f32_to_f16(f));
  if (dtype == DType::kBF16) return bf16_to_f32(f32_to_bf16(f));
  return f;
}

Result<std::vector<int64_t>> output_dims(const KernelContext& ctx,
                                         const Tensor& a, const Tensor& b) {
  SEQRT_ASSIGN_OR_RETURN(std::optional<Shape> out,
                         matmul_shape(ctx, a.shape(), b.shape()));
  return out->fixed_dims();
}

}  // namespace

Status run_matmul_integer(KernelContext& ctx) {
  const Tensor& a = *ctx.input(0);
  const Tensor& b = *ctx.input(1);
  SEQRT_ASSIGN_OR_RETURN(std::vector<int64_t> dims, output_dims(ctx, a, b));
  SEQRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kI32, dims));
  int32_t* out = y->mutable_data_as<int32_t>();
  return integer_matmul(
      ctx, a, b, ctx.has_input(2) ? ctx.input(2) : nullptr,
      ctx.has_input(3) ? ctx.input(3) : nullptr, "a_zero_point", "b_zero_point",
      [&](int64_t index, int64_t, int64_t, int32_t acc) { out[index] = acc; });
}

Status run_qlinear_matmul(KernelContext& ctx) {
  const Tensor& a = *ctx.input(kA);
  const Tensor& b = *ctx.input(kB);
  const Tensor& a_scale = *ctx.input(kAScale);
  const Tensor& b_scale = *ctx.input(kBScale);
  const Tensor& y_scale = *ctx.input(kYScale);
  const Tensor& y_zero = *ctx.input(kYZero);
  if (y_scale.num_elements() != 1 || y_zero.num_elements() != 1) {
    return ctx.error("y_scale and y_zero_point must have one element each");
  }
  SEQRT_ASSIGN_OR_RETURN(std::vector<int64_t> dims, output_dims(ctx, a, b));
  const int64_t m = a.rank() == 1 ? 1 : a.dim(a.rank() - 2);
  const int64_t n = b.rank() == 1 ? 1 : b.dim(b.rank() - 1);
  SEQRT_RETURN_IF_ERROR(check_vector(ctx, "a_scale", &a_scale, m));
  SEQRT_RETURN_IF_ERROR(check_vector(ctx, "b_scale", &b_scale, n));
  SEQRT_ASSIGN_OR_RETURN(Tensor * y,
                         ctx.allocate_output(0, y_zero.dtype(), dims));
  const DType scale_dtype = y_scale.dtype();
  const double zero = y_zero.element_f64(0);
  const double lo = static_cast<double>(integer_lowest(y_zero.dtype()));
  const double hi = static_cast<double>(integer_highest(y_zero.dtype()));
  return integer_matmul(
      ctx, a, b, ctx.input(kAZero), ctx.input(kBZero), "a_zero_point",
      "b_zero_point", [&](int64_t index, int64_t i, int64_t j, int32_t acc) {
        const double scale =
            round_to(scale_dtype,
                     round_to(scale_dtype, at(&a_scale, i) * at(&b_scale, j)) /
                         y_scale.element_f64(0));
        const double q =
            std::nearbyint(static_cast<double>(acc) * scale) + zero;
        y->set_element_i64(index, static_cast<int64_t>(std::clamp(q, lo, hi)));
      });
}

void register_matmul_integer(OpRegistry& registry) {
  OpSchema s;
  s.name = "MatMulInteger";
  s.doc = "int32 numpy matmul of u8/i8 inputs less their zero points";
  s.inputs = {{"A"}, {"B"}, {"a_zero_point", true}, {"b_zero_point", true}};
  s.outputs = {{"Y"}};
  s.infer = infer_matmul_integer;
  s.reference = run_matmul_integer;
  register_or_die(registry, std::move(s));

  OpSchema q;
  q.name = "QLinearMatMul";
  q.doc = "quantized matmul: dequantize a and b, multiply, requantize";
  q.inputs = {{"a"},       {"a_scale"},     {"a_zero_point"},
              {"b"},       {"b_scale"},     {"b_zero_point"},
              {"y_scale"}, {"y_zero_point"}};
  q.outputs = {{"y"}};
  q.infer = infer_qlinear_matmul;
  q.reference = run_qlinear_matmul;
  register_or_die(registry, std::move(q));
}

}  // namespace seqrt
