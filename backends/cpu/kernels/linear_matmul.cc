#include "backends/cpu/kernels/linear_matmul.h"

#include "backends/cpu/float_io.h"
#include "backends/cpu/onednn/engine.h"
#include "backends/cpu/simd/gemm.h"

namespace seqrt::cpu {
namespace {

constexpr int64_t kDefaultRowsHint = 128;
// Products of at most this many rows (a decode token) run on dnnl_sgemm
// when there is nothing but a bias to add: measured with
// bench/linear_bench, GPT-2's M=1 layer is 4-12% slower on the primitive
// (its fixed cost per call), while every larger shape is at par or faster.
constexpr int64_t kSgemmMaxRows = 1;

bool runs_on_sgemm(bool transpose_src, int64_t rows,
                   const MatmulWeights& weights,
                   const MatmulEpilogue& epilogue) {
  return weights.packed != nullptr && rows <= kSgemmMaxRows && !transpose_src &&
         epilogue.alpha == 1.0f && epilogue.sum_scale == 0.0f &&
         epilogue.activation == onednn::Activation::kNone;
}

void run_on_sgemm(const float* src, int64_t rows, int64_t k, int64_t n,
                  const onednn::PackedWeights& weights, const float* bias,
                  float* dst) {
  bool transposed = weights.transposed();
  sgemm(false, transposed, rows, n, k, 1.0f, src, k, weights.plain(),
        transposed ? k : n, 0.0f, dst, n);
  if (bias == nullptr) return;
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < n; ++j) dst[i * n + j] += bias[j];
  }
}

onednn::MatmulProblem problem_of(bool transpose_src, int64_t rows, int64_t k,
                                 int64_t n, const MatmulWeights& weights,
                                 const MatmulEpilogue& epilogue) {
  onednn::MatmulProblem p;
  p.src_dims = {rows, k};
  if (transpose_src) p.src_strides = {1, rows};
  p.weights_dims = {k, n};
  p.packed_weights = weights.packed != nullptr;
  if (!p.packed_weights && weights.transposed) p.weights_strides = {1, k};
  p.dst_dims = {rows, n};
  p.bias = epilogue.bias != nullptr;
  p.alpha = epilogue.alpha;
  p.sum_scale = epilogue.sum_scale;
  p.activation = epilogue.activation;
  return p;
}

}  // namespace

Status run_linear_matmul(const std::string& label, const float* src,
                         bool transpose_src, int64_t rows, int64_t k, int64_t n,
                         const MatmulWeights& weights,
                         const MatmulEpilogue& epilogue, float* dst) {
  if (runs_on_sgemm(transpose_src, rows, weights, epilogue)) {
    run_on_sgemm(src, rows, k, n, *weights.packed, epilogue.bias, dst);
    return Status::ok();
  }
  onednn::MatmulProblem problem =
      problem_of(transpose_src, rows, k, n, weights, epilogue);
  SEQRT_ASSIGN_OR_RETURN(auto primitive,
                         onednn::matmul_primitive(problem, label));
  if (!primitive->available()) {
    return internal_error("{}: oneDNN has no f32 matmul for {}", label,
                          problem.key());
  }
  dnnl::memory weight_memory;
  if (weights.packed != nullptr) {
    SEQRT_ASSIGN_OR_RETURN(
        weight_memory, weights.packed->in_layout(primitive->weights, label));
  } else {
    SEQRT_RETURN_IF_ERROR(onednn::guarded(label, "wrap the weights", [&] {
      weight_memory = onednn::wrap(primitive->weights, weights.plain);
    }));
  }
  return onednn::execute_matmul(*primitive, label, src, weight_memory,
                                epilogue.bias, dst);
}

int64_t rows_hint(const Graph& graph, ValueId value) {
  const std::optional<Shape>& shape = graph.value(value).shape;
  if (!shape || shape->rank() == 0) return kDefaultRowsHint;
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < shape->rank(); ++i) {
    if (!(*shape)[i].is_fixed()) return kDefaultRowsHint;
    rows *= (*shape)[i].value();
  }
  return rows > 0 ? rows : kDefaultRowsHint;
}

Result<std::shared_ptr<onednn::PackedWeights>> pack_constant_weights(
    const std::string& label, const Tensor& weights, bool transposed,
    int64_t rows, bool has_bias, onednn::Activation activation) {
  SEQRT_ASSIGN_OR_RETURN(Tensor plain, load_f32(weights));
  std::shared_ptr<onednn::PackedWeights> packed;
  SEQRT_RETURN_IF_ERROR(onednn::guarded(label, "describe the weights", [&] {
    packed = std::make_shared<onednn::PackedWeights>(plain, transposed);
  }));
  if (packed->k() == 0 || packed->n() == 0) return packed;  // nothing to do
  MatmulWeights w{packed.get(), nullptr, transposed};
  MatmulEpilogue epilogue;
  epilogue.activation = activation;
  onednn::MatmulProblem problem =
      problem_of(false, rows, packed->k(), packed->n(), w, epilogue);
  problem.bias = has_bias;
  SEQRT_ASSIGN_OR_RETURN(auto primitive,
                         onednn::matmul_primitive(problem, label));
  if (primitive->available()) {
    SEQRT_RETURN_IF_ERROR(
        packed->in_layout(primitive->weights, label).status());
  }
  return packed;
}

}  // namespace seqrt::cpu
