#include "backends/cuda/kernels/gemm.h"

#include <fmt/format.h>

namespace seqrt::cuda {
namespace {

Status check(cublasStatus_t status, const char* call) {
  if (status == CUBLAS_STATUS_SUCCESS) return Status::ok();
  return make_error(StatusCode::kInternal, "cuda backend: {} failed: {}", call,
                    cublasLtGetStatusString(status));
}

// Destroys the cuBLASLt descriptors on every path out.
struct Descriptors {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t layouts[3] = {};
  ~Descriptors() {
    for (cublasLtMatrixLayout_t layout : layouts) {
      if (layout != nullptr) cublasLtMatrixLayoutDestroy(layout);
    }
    if (op != nullptr) cublasLtMatmulDescDestroy(op);
  }
};

Status make_layout(cublasLtMatrixLayout_t* layout, int64_t rows, int64_t cols,
                   int64_t batch, int64_t stride) {
  SEQRT_RETURN_IF_ERROR(
      check(cublasLtMatrixLayoutCreate(layout, CUDA_R_32F, rows, cols, rows),
            "cublasLtMatrixLayoutCreate"));
  int32_t count = static_cast<int32_t>(batch);
  SEQRT_RETURN_IF_ERROR(check(
      cublasLtMatrixLayoutSetAttribute(
          *layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)),
      "cublasLtMatrixLayoutSetAttribute"));
  return check(cublasLtMatrixLayoutSetAttribute(
                   *layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                   &stride, sizeof(stride)),
               "cublasLtMatrixLayoutSetAttribute");
}

}  // namespace

Status gemm_f32(cublasLtHandle_t handle, cudaStream_t stream, const float* a,
                const float* b, float* c, int64_t m, int64_t n, int64_t k,
                int64_t batch, int64_t stride_a, int64_t stride_b,
                int64_t stride_c) {
  if (m == 0 || n == 0 || batch == 0) return Status::ok();
  if (k == 0) {
    // An empty sum: zeros.
    if (cudaMemsetAsync(c, 0, sizeof(float) * m * n * batch, stream) !=
        cudaSuccess) {
      return make_error(StatusCode::kInternal,
                        "cuda backend: cudaMemsetAsync failed");
    }
    return Status::ok();
  }
  // cuBLASLt is column-major: a row-major (r x c) matrix is its (c x r)
  // transpose, so C = A·B is computed as Cᵀ = Bᵀ·Aᵀ with no copies.
  Descriptors d;
  SEQRT_RETURN_IF_ERROR(
      check(cublasLtMatmulDescCreate(&d.op, CUBLAS_COMPUTE_32F, CUDA_R_32F),
            "cublasLtMatmulDescCreate"));
  SEQRT_RETURN_IF_ERROR(make_layout(&d.layouts[0], n, k, batch, stride_b));
  SEQRT_RETURN_IF_ERROR(make_layout(&d.layouts[1], k, m, batch, stride_a));
  SEQRT_RETURN_IF_ERROR(make_layout(&d.layouts[2], n, m, batch, stride_c));
  const float alpha = 1.0f;
  const float beta = 0.0f;
  return check(cublasLtMatmul(handle, d.op, &alpha, b, d.layouts[0], a,
                              d.layouts[1], &beta, c, d.layouts[2], c,
                              d.layouts[2], nullptr, nullptr, 0, stream),
               "cublasLtMatmul");
}

Status gemm_ex_f32(cublasLtHandle_t handle, cudaStream_t stream, const float* a,
                   const float* b, float* y, int64_t m, int64_t n, int64_t k,
                   bool trans_a, bool trans_b, float alpha, float beta) {
  if (m == 0 || n == 0) return Status::ok();
  if (k == 0) {
    return make_error(StatusCode::kInternal,
                      "cuda backend: gemm_ex_f32 needs k >= 1 (the caller "
                      "handles the empty sum)");
  }
  // Column-major view of row-major storage, as in gemm_f32: Yᵀ (n x m) =
  // op(B)ᵀ·op(A)ᵀ. B stored (k x n) is column-major (n x k) = Bᵀ, used
  // as is; stored (n x k) (trans_b) it is column-major (k x n) and is
  // transposed. Likewise for A.
  Descriptors d;
  SEQRT_RETURN_IF_ERROR(
      check(cublasLtMatmulDescCreate(&d.op, CUBLAS_COMPUTE_32F, CUDA_R_32F),
            "cublasLtMatmulDescCreate"));
  const cublasOperation_t op_first = trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_second = trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  SEQRT_RETURN_IF_ERROR(
      check(cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_TRANSA,
                                           &op_first, sizeof(op_first)),
            "cublasLtMatmulDescSetAttribute"));
  SEQRT_RETURN_IF_ERROR(
      check(cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_TRANSB,
                                           &op_second, sizeof(op_second)),
            "cublasLtMatmulDescSetAttribute"));
  if (trans_b) {
    SEQRT_RETURN_IF_ERROR(make_layout(&d.layouts[0], k, n, 1, 0));
  } else {
    SEQRT_RETURN_IF_ERROR(make_layout(&d.layouts[0], n, k, 1, 0));
  }
  if (trans_a) {
    SEQRT_RETURN_IF_ERROR(make_layout(&d.layouts[1], m, k, 1, 0));
  } else {
    SEQRT_RETURN_IF_ERROR(make_layout(&d.layouts[1], k, m, 1, 0));
  }
  SEQRT_RETURN_IF_ERROR(make_layout(&d.layouts[2], n, m, 1, 0));
  return check(cublasLtMatmul(handle, d.op, &alpha, b, d.layouts[0], a,
                              d.layouts[1], &beta, y, d.layouts[2], y,
                              d.layouts[2], nullptr, nullptr, 0, stream),
               "cublasLtMatmul");
}

}  // namespace seqrt::cuda
