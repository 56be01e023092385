// The contract of seqrt::SSD (Mamba-2 state-space duality, OPS.md), written
// once for the op and every backend: input/output indices, attributes with
// their defaults (the schema is built from the same constants), and the
// check on dims and dtypes that returns the named sizes. Layouts: x, z, y
// (B,L,H,P); dt (B,L,H); A, D, dt_bias (H); Bm, Cm (B,L,G,N); past/present
// state (B,H,P,N); H a multiple of G.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "graph/graph.h"
#include "ops/op_schema.h"
#include "ops/sequence/scan_common.h"

namespace seqrt {

struct SsdInput {
  enum : size_t {
    kX,
    kDt,
    kA,
    kBm,
    kCm,
    kD,          // optional
    kZ,          // optional
    kDtBias,     // optional
    kPastState,  // optional
    kCount
  };
};
struct SsdOutput {
  enum : size_t { kY, kPresentState /* optional */, kCount };
};

struct SsdAttrs {
  static constexpr const char* kDtSoftplusName = "dt_softplus";
  static constexpr const char* kDtMinName = "dt_min";
  static constexpr const char* kDtMaxName = "dt_max";
  static constexpr const char* kChunkSizeName = "chunk_size";
  static constexpr int64_t kDtSoftplusDefault = 1;
  static constexpr float kDtMinDefault = 0.0f;
  static constexpr float kDtMaxDefault = std::numeric_limits<float>::infinity();
  // The chunk length of a backend's chunked form; the result must not
  // depend on it.
  static constexpr int64_t kChunkSizeDefault = 256;

  bool dt_softplus = kDtSoftplusDefault != 0;  // Δ = softplus(dt + dt_bias)
  float dt_min = kDtMinDefault;                // Δ is clamped to [min, max]
  float dt_max = kDtMaxDefault;
  int64_t chunk_size = kChunkSizeDefault;

  // Errors name the node: chunk_size < 1, dt_min > dt_max.
  static Result<SsdAttrs> from(const Node& node);
  // The schema's attributes, from the constants above.
  static std::vector<AttrSpec> specs();
};

// Sizes of a valid node; -1 where only inference runs and the size is not
// known.
struct SsdDims {
  int64_t batch, length, heads, head_dim, groups, state;  // B L H P G N
};

// Shapes and dtypes of the inputs (SsdInput order) against the layouts
// above; errors name the node and the input.
Result<SsdDims> check_ssd(const Node& node, const KernelInputTypes& types);
// The same from a kernel's tensors, with the attributes' check first.
Result<SsdDims> check_ssd(const KernelContext& ctx);

}  // namespace seqrt
