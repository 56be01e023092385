#include "backends/cpu/simd/gemm.h"

#include <oneapi/dnnl/dnnl.h>

#include <cstdio>
#include <cstdlib>

namespace seqrt::cpu {

void sgemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k,
           float alpha, const float* a, int64_t lda, const float* b,
           int64_t ldb, float beta, float* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  dnnl_status_t status =
      dnnl_sgemm(transpose_a ? 'T' : 'N', transpose_b ? 'T' : 'N', m, n, k,
                 alpha, a, lda, b, ldb, beta, c, ldc);
  // Only malformed arguments fail, which is a bug in the calling kernel.
  if (status != dnnl_success) {
    std::fprintf(stderr, "seqrt: dnnl_sgemm failed (%d) for %lldx%lldx%lld\n",
                 static_cast<int>(status), static_cast<long long>(m),
                 static_cast<long long>(n), static_cast<long long>(k));
    std::abort();
  }
}

}  // namespace seqrt::cpu
