// The contract of seqrt::Retention (RetNet multi-scale retention, OPS.md),
// written once for the op and every backend: input/output indices,
// attributes with their defaults (the schema is built from the same
// constants), and the check on dims and dtypes that returns the checked
// problem, so every backend rejects the same bad inputs. Layouts: Q, K
// (B,H,T,dk); V (B,H,T,dv); Y (B,H,T,dv); past/present state (B,H,dk,dv).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "graph/graph.h"
#include "ops/op_schema.h"
#include "ops/sequence/scan_common.h"

namespace seqrt {

struct RetentionInput {
  enum : size_t { kQ, kK, kV, kPastState /* optional */, kCount };
};
struct RetentionOutput {
  enum : size_t { kY, kPresentState /* optional */, kCount };
};

struct RetentionAttrs {
  static constexpr const char* kGammasName = "gammas";
  static constexpr const char* kScaleName = "scale";
  static constexpr const char* kChunkSizeName = "chunk_size";
  static constexpr int64_t kChunkSizeDefault = 64;

  std::optional<std::vector<float>> gammas;  // absent: 1 − 2^(−5−h)
  std::optional<float> scale;                // absent: 1/sqrt(dk)
  int64_t chunk_size = kChunkSizeDefault;    // a tuning hint only

  static RetentionAttrs from(const Node& node);
  // The schema's attributes, from the constants above.
  static std::vector<AttrSpec> specs();
};

struct RetentionProblem {
  int64_t batch = 0, heads = 0, seq = 0, dk = 0, dv = 0;
  std::vector<double> gammas;  // one decay per head, in [0, 1]
  double scale = 1.0;          // on K: the attribute, or 1/sqrt(dk)
  int64_t chunk_size = RetentionAttrs::kChunkSizeDefault;
  DType state_dtype = DType::kF32;  // present_state: past_state's, else Q's
};

// The default decay of head h: 1 − 2^(−5−h).
double default_retention_gamma(int64_t head);

// Validates concrete input dims and dtypes (RetentionInput order) and the
// attributes; errors name the node and what was expected.
Result<RetentionProblem> check_retention(const Node& node,
                                         const KernelInputTypes& types);
// The same from a kernel's tensors.
Result<RetentionProblem> check_retention(const KernelContext& ctx);

}  // namespace seqrt
