// CPU kernels of MatMul (numpy batch broadcasting, 1-D operands) and Gemm
// (transposes, alpha, beta, broadcast C). When B is a graph constant,
// prepare() packs it once at compile time for oneDNN's matmul primitive
// (linear_matmul.h), which then runs the product with alpha, the bias and
// beta·C as attributes and post-ops; A's batch dims fold into the rows.
// Other float products go through oneDNN's sgemm: one call when there is
// one batch or B is shared by a contiguous batch of A (the batch folds into
// M), else one call per batch in parallel — their shapes change from run to
// run (a growing KV cache), and a primitive per shape would be created
// (JIT-compiled) over and over. f64 and integer operands compute as the
// reference does, in double (integers truncated back), with rows in
// parallel and a vectorised row-times-matrix loop.
#include <algorithm>
#include <vector>

#include "backends/cpu/float_io.h"
#include "backends/cpu/kernel_table.h"
#include "backends/cpu/kernels/float_support.h"
#include "backends/cpu/kernels/linear_matmul.h"
#include "backends/cpu/kernels/typed_support.h"
#include "backends/cpu/parallel.h"
#include "backends/cpu/simd/gemm.h"
#include "ops/node_attrs.h"
#include "ops/util.h"

namespace seqrt::cpu {
namespace {

Status check_float_pair(const KernelContext& ctx, DType a, DType b) {
  if (a != b) {
    return ctx.error("A and B must share one numeric dtype, got {} and {}",
                     dtype_name(a), dtype_name(b));
  }
  if (a == DType::kBool) {
    return ctx.error("A and B must share one numeric dtype, got bool");
  }
  return Status::ok();
}

// MatMul's operands as batches of M×K and K×N matrices.
struct MatMulPlan {
  std::vector<int64_t> out_dims;
  std::vector<int64_t> batch_dims;       // broadcast batch dims
  std::vector<int64_t> a_batch_strides;  // in matrices, 0 when broadcast
  std::vector<int64_t> b_batch_strides;
  int64_t batches = 1;
  int64_t m = 0, k = 0, n = 0;
};

Result<MatMulPlan> plan_matmul(const KernelContext& ctx, std::vector<int64_t> a,
                               std::vector<int64_t> b) {
  if (a.empty() || b.empty()) {
    return ctx.error("inputs must have rank >= 1, got {} and {}",
                     dims_to_string(a), dims_to_string(b));
  }
  MatMulPlan plan;
  bool a_vector = a.size() == 1;
  bool b_vector = b.size() == 1;
  if (a_vector) a.insert(a.begin(), 1);
  if (b_vector) b.push_back(1);
  plan.m = a[a.size() - 2];
  plan.k = a.back();
  plan.n = b.back();
  if (b[b.size() - 2] != plan.k) {
    return ctx.error("inner dims differ: A is {}, B is {}", dims_to_string(a),
                     dims_to_string(b));
  }
  std::vector<int64_t> a_batch(a.begin(), a.end() - 2);
  std::vector<int64_t> b_batch(b.begin(), b.end() - 2);
  SEQRT_ASSIGN_OR_RETURN(plan.batch_dims,
                         broadcast_dims(ctx, a_batch, b_batch));
  plan.a_batch_strides = broadcast_strides(a_batch, plan.batch_dims);
  plan.b_batch_strides = broadcast_strides(b_batch, plan.batch_dims);
  for (int64_t d : plan.batch_dims) plan.batches *= d;
  plan.out_dims = plan.batch_dims;
  if (!a_vector) plan.out_dims.push_back(plan.m);
  if (!b_vector) plan.out_dims.push_back(plan.n);
  return plan;
}

// Offset in matrices of batch `index` for the given batch strides.
int64_t batch_offset(const MatMulPlan& plan,
                     const std::vector<int64_t>& strides, int64_t index) {
  int64_t offset = 0;
  for (size_t i = plan.batch_dims.size(); i-- > 0;) {
    offset += (index % plan.batch_dims[i]) * strides[i];
    index /= plan.batch_dims[i];
  }
  return offset;
}

bool all_zero(const std::vector<int64_t>& strides) {
  for (int64_t s : strides) {
    if (s != 0) return false;
  }
  return true;
}

// A's batches lie one after another, as the output's do.
bool contiguous_batches(const MatMulPlan& plan) {
  return plan.a_batch_strides == strides_of(plan.batch_dims);
}

void run_matmul_plan(const MatMulPlan& plan, const float* a, const float* b,
                     float* y) {
  const int64_t m = plan.m, k = plan.k, n = plan.n;
  if (plan.batches == 1 ||
      (all_zero(plan.b_batch_strides) && contiguous_batches(plan))) {
    sgemm(false, false, plan.batches * m, n, k, 1.0f, a, k, b, n, 0.0f, y, n);
    return;
  }
  parallel_for(plan.batches, [&](int64_t i) {
    const float* ai = a + batch_offset(plan, plan.a_batch_strides, i) * m * k;
    const float* bi = b + batch_offset(plan, plan.b_batch_strides, i) * k * n;
    sgemm(false, false, m, n, k, 1.0f, ai, k, bi, n, 0.0f, y + i * m * n, n);
  });
}

// One output row per task: y[i, :] = Σ_r a[i, r]·b[r, :], in double.
template <typename T>
void run_matmul_exact(const MatMulPlan& plan, const T* a, const T* b, T* y) {
  const int64_t m = plan.m, k = plan.k, n = plan.n;
  parallel_chunks(
      plan.batches * m, std::max<int64_t>(1, 4096 / (k * n + 1)),
      [&](int64_t begin, int64_t end) {
        std::vector<double> acc(static_cast<size_t>(n));
        for (int64_t task = begin; task < end; ++task) {
          const int64_t batch = task / m, row = task % m;
          const T* ai =
              a + batch_offset(plan, plan.a_batch_strides, batch) * m * k +
              row * k;
          const T* bi =
              b + batch_offset(plan, plan.b_batch_strides, batch) * k * n;
          std::fill(acc.begin(), acc.end(), 0.0);
          for (int64_t r = 0; r < k; ++r) {
            const double coef = static_cast<double>(ai[r]);
            const T* b_row = bi + r * n;
            for (int64_t j = 0; j < n; ++j) {
              acc[j] += coef * static_cast<double>(b_row[j]);
            }
          }
          for (int64_t j = 0; j < n; ++j) y[task * n + j] = from_f64<T>(acc[j]);
        }
      });
}

// `packed`: B prepared at compile time (a constant 2-D B), or null.
Status run_matmul_with(KernelContext& ctx, onednn::PackedWeights* packed) {
  const Tensor& a_in = *ctx.input(0);
  const Tensor& b_in = *ctx.input(1);
  SEQRT_RETURN_IF_ERROR(check_float_pair(ctx, a_in.dtype(), b_in.dtype()));
  SEQRT_ASSIGN_OR_RETURN(MatMulPlan plan,
                         plan_matmul(ctx, a_in.dims(), b_in.dims()));
  if (!is_f32_family(a_in.dtype())) {
    SEQRT_ASSIGN_OR_RETURN(Tensor * y,
                           ctx.allocate_output(0, a_in.dtype(), plan.out_dims));
    visit_exact_numeric(a_in.dtype(), [&](auto tag) {
      using T = decltype(tag);
      run_matmul_exact<T>(plan, a_in.data_as<T>(), b_in.data_as<T>(),
                          y->template mutable_data_as<T>());
    });
    return Status::ok();
  }
  SEQRT_ASSIGN_OR_RETURN(Tensor a, load_f32(a_in));
  SEQRT_ASSIGN_OR_RETURN(Tensor y,
                         f32_output(ctx, 0, a_in.dtype(), plan.out_dims));
  // With K = 0 the products are empty sums: the zero-filled output.
  if (y.num_elements() == 0 || plan.k == 0) {
    return set_output_as(ctx, 0, y, a_in.dtype());
  }
  // A 2-D B is never batched, so A's batches (contiguous) are more rows.
  if (packed != nullptr && b_in.rank() == 2) {
    SEQRT_RETURN_IF_ERROR(run_linear_matmul(
        ctx.node().label(), a.data_as<float>(), false, plan.batches * plan.m,
        plan.k, plan.n, MatmulWeights{packed}, MatmulEpilogue{},
        y.mutable_data_as<float>()));
  } else {
    SEQRT_ASSIGN_OR_RETURN(Tensor b, load_f32(b_in));
    run_matmul_plan(plan, a.data_as<float>(), b.data_as<float>(),
                    y.mutable_data_as<float>());
  }
  return set_output_as(ctx, 0, y, a_in.dtype());
}

Status run_matmul(KernelContext& ctx) { return run_matmul_with(ctx, nullptr); }

// A 2-D constant B of a float MatMul, packed for the primitive: the
// returned kernel runs on it. Other nodes keep run_matmul.
Result<KernelFn> prepare_matmul(const Graph& graph, const Node& node) {
  const Tensor* b = graph.constant(node.inputs[1]);
  if (b == nullptr || b->rank() != 2 || !is_f32_family(b->dtype())) {
    return KernelFn(run_matmul);
  }
  SEQRT_ASSIGN_OR_RETURN(
      std::shared_ptr<onednn::PackedWeights> packed,
      pack_constant_weights(node.label(), *b, false,
                            rows_hint(graph, node.inputs[0]), false,
                            onednn::Activation::kNone));
  return KernelFn([packed](KernelContext& ctx) {
    return run_matmul_with(ctx, packed.get());
  });
}

// Gemm's C broadcast into y (M×N), which sgemm then scales by beta.
void fill_with_c(const Tensor& c, int64_t m, int64_t n, float* y) {
  std::vector<int64_t> strides = broadcast_strides(c.dims(), {m, n});
  const float* pc = c.data_as<float>();
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      y[i * n + j] = pc[i * strides[0] + j * strides[1]];
    }
  }
}

Status check_gemm_c(const KernelContext& ctx, const Tensor& c, int64_t m,
                    int64_t n) {
  if (c.rank() > 2) {
    return ctx.error("C must have rank <= 2, got {}", dims_to_string(c.dims()));
  }
  std::vector<int64_t> dims = c.dims();
  while (dims.size() < 2) dims.insert(dims.begin(), 1);
  bool ok = (dims[0] == 1 || dims[0] == m) && (dims[1] == 1 || dims[1] == n);
  if (!ok) {
    return ctx.error("C {} does not broadcast to ({},{})",
                     dims_to_string(c.dims()), m, n);
  }
  return Status::ok();
}

struct GemmShape {
  int64_t m, n, k;
  bool trans_a, trans_b;
  double alpha, beta;
};

// y = alpha·A'B' + beta·C in double, as the reference, rows in parallel.
template <typename T>
void run_gemm_exact(const GemmShape& s, const T* a, const T* b, const Tensor* c,
                    T* y) {
  std::vector<int64_t> c_strides =
      c ? broadcast_strides(c->dims(), {s.m, s.n}) : std::vector<int64_t>{0, 0};
  const T* pc = c ? c->data_as<T>() : nullptr;
  parallel_for(s.m, [&](int64_t i) {
    std::vector<double> acc(static_cast<size_t>(s.n), 0.0);
    for (int64_t r = 0; r < s.k; ++r) {
      const double coef =
          static_cast<double>(a[s.trans_a ? r * s.m + i : i * s.k + r]);
      for (int64_t j = 0; j < s.n; ++j) {
        acc[j] += coef *
                  static_cast<double>(b[s.trans_b ? j * s.k + r : r * s.n + j]);
      }
    }
    for (int64_t j = 0; j < s.n; ++j) {
      double value = s.alpha * acc[j];
      if (pc)
        value += s.beta *
                 static_cast<double>(pc[i * c_strides[0] + j * c_strides[1]]);
      y[i * s.n + j] = from_f64<T>(value);
    }
  });
}

// Gemm's epilogue on the primitive: C as the bias when it is a row added
// as it is, else C broadcast into y and added back by the sum post-op.
MatmulEpilogue gemm_epilogue(const Tensor* c, const GemmShape& s, float* y) {
  MatmulEpilogue epilogue;
  epilogue.alpha = static_cast<float>(s.alpha);
  if (c == nullptr || s.beta == 0.0) return epilogue;
  bool row =
      c->rank() >= 1 && c->num_elements() == s.n && c->dims().back() == s.n;
  if (row && s.alpha == 1.0 && s.beta == 1.0) {
    epilogue.bias = c->data_as<float>();
  } else {
    fill_with_c(*c, s.m, s.n, y);
    epilogue.sum_scale = static_cast<float>(s.beta);
  }
  return epilogue;
}

// `packed`: B prepared at compile time (a constant B), or null.
Status run_gemm_with(KernelContext& ctx, onednn::PackedWeights* packed) {
  const Tensor& a_in = *ctx.input(0);
  const Tensor& b_in = *ctx.input(1);
  const Tensor* c_in = ctx.input(2);
  SEQRT_RETURN_IF_ERROR(check_float_pair(ctx, a_in.dtype(), b_in.dtype()));
  if (c_in) {
    SEQRT_RETURN_IF_ERROR(check_float_pair(ctx, a_in.dtype(), c_in->dtype()));
  }
  if (a_in.rank() != 2 || b_in.rank() != 2) {
    return ctx.error("A and B must be 2-D, got {} and {}",
                     dims_to_string(a_in.dims()), dims_to_string(b_in.dims()));
  }
  bool trans_a = ctx.attr_int("transA") != 0;
  bool trans_b = ctx.attr_int("transB") != 0;
  int64_t m = trans_a ? a_in.dim(1) : a_in.dim(0);
  int64_t k = trans_a ? a_in.dim(0) : a_in.dim(1);
  int64_t kb = trans_b ? b_in.dim(1) : b_in.dim(0);
  int64_t n = trans_b ? b_in.dim(0) : b_in.dim(1);
  if (k != kb) {
    return ctx.error("inner dims differ: A' is ({},{}), B' is ({},{})", m, k,
                     kb, n);
  }
  if (c_in) SEQRT_RETURN_IF_ERROR(check_gemm_c(ctx, *c_in, m, n));
  if (!is_f32_family(a_in.dtype())) {
    SEQRT_ASSIGN_OR_RETURN(Tensor * y,
                           ctx.allocate_output(0, a_in.dtype(), {m, n}));
    GemmShape shape{m,
                    n,
                    k,
                    trans_a,
                    trans_b,
                    ctx.attr_float("alpha"),
                    ctx.attr_float("beta")};
    visit_exact_numeric(a_in.dtype(), [&](auto tag) {
      using T = decltype(tag);
      run_gemm_exact<T>(shape, a_in.data_as<T>(), b_in.data_as<T>(), c_in,
                        y->template mutable_data_as<T>());
    });
    return Status::ok();
  }
  SEQRT_ASSIGN_OR_RETURN(Tensor a, load_f32(a_in));
  SEQRT_ASSIGN_OR_RETURN(Tensor y, f32_output(ctx, 0, a_in.dtype(), {m, n}));
  float* py = y.mutable_data_as<float>();
  if (packed != nullptr && m * n > 0 && k > 0) {
    Tensor c;
    if (c_in) {
      SEQRT_ASSIGN_OR_RETURN(c, load_f32(*c_in));
    }
    GemmShape shape{m,
                    n,
                    k,
                    trans_a,
                    trans_b,
                    ctx.attr_float("alpha"),
                    ctx.attr_float("beta")};
    MatmulEpilogue epilogue = gemm_epilogue(c_in ? &c : nullptr, shape, py);
    SEQRT_RETURN_IF_ERROR(
        run_linear_matmul(ctx.node().label(), a.data_as<float>(), trans_a, m, k,
                          n, MatmulWeights{packed}, epilogue, py));
    return set_output_as(ctx, 0, y, a_in.dtype());
  }
  SEQRT_ASSIGN_OR_RETURN(Tensor b, load_f32(b_in));
  float beta = 0.0f;
  if (c_in && m * n > 0) {
    SEQRT_ASSIGN_OR_RETURN(Tensor c, load_f32(*c_in));
    fill_with_c(c, m, n, py);
    beta = ctx.attr_float("beta");
  }
  if (m * n > 0 && k > 0) {
    sgemm(trans_a, trans_b, m, n, k, ctx.attr_float("alpha"),
          a.data_as<float>(), a_in.dim(1), b.data_as<float>(), b_in.dim(1),
          beta, py, n);
  } else if (m * n > 0) {
    for (int64_t i = 0; i < m * n; ++i) py[i] *= beta;
  }
  return set_output_as(ctx, 0, y, a_in.dtype());
}

Status run_gemm(KernelContext& ctx) { return run_gemm_with(ctx, nullptr); }

// A constant B of a float Gemm, packed (read transposed for transB).
Result<KernelFn> prepare_gemm(const Graph& graph, const Node& node) {
  const Tensor* b = graph.constant(node.inputs[1]);
  if (b == nullptr || b->rank() != 2 || !is_f32_family(b->dtype())) {
    return KernelFn(run_gemm);
  }
  bool trans_a = node_attr_int(node, "transA") != 0;
  bool trans_b = node_attr_int(node, "transB") != 0;
  int64_t rows = rows_hint(graph, node.inputs[0]);
  const std::optional<Shape>& a_shape = graph.value(node.inputs[0]).shape;
  if (trans_a && a_shape && a_shape->rank() == 2 && (*a_shape)[1].is_fixed()) {
    rows = (*a_shape)[1].value();
  }
  SEQRT_ASSIGN_OR_RETURN(
      std::shared_ptr<onednn::PackedWeights> packed,
      pack_constant_weights(node.label(), *b, trans_b, rows, false,
                            onednn::Activation::kNone));
  return KernelFn([packed](KernelContext& ctx) {
    return run_gemm_with(ctx, packed.get());
  });
}

}  // namespace

void register_matmul_kernels(KernelTable& table) {
  table.add(
      CpuKernel{kOnnxDomain, "MatMul", run_matmul, nullptr, prepare_matmul});
  table.add(CpuKernel{kOnnxDomain, "Gemm", run_gemm, nullptr, prepare_gemm});
}

}  // namespace seqrt::cpu
