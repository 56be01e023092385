// seqrt::Retention (RetNet multi-scale retention): the checked problem
// description shared by the reference kernel (retention.cc) and the
// backends' kernels, so every backend rejects the same bad inputs.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/tensor.h"
#include "ops/op_context.h"

namespace seqrt {

struct RetentionProblem {
  int64_t batch = 0, heads = 0, seq = 0, dk = 0, dv = 0;
  std::vector<double> gammas;       // one decay per head, in [0, 1]
  double scale = 1.0;               // on K: the attribute, or 1/sqrt(dk)
  int64_t chunk_size = 64;          // a tuning hint, never changes results
  DType state_dtype = DType::kF32;  // present_state: past_state's, else Q's
};

// The default decay of head h: 1 − 2^(−5−h).
double default_retention_gamma(int64_t head);

// Validates Q (B,H,T,dk), K (B,H,T,dk), V (B,H,T,dv), past_state?
// (B,H,dk,dv) and the attributes; `past_state` is null when omitted.
Result<RetentionProblem> check_retention(const OpContext& ctx, const Tensor& q,
                                         const Tensor& k, const Tensor& v,
                                         const Tensor* past_state);

}  // namespace seqrt
