// The contract of seqrt::SelectiveScan (Mamba-1, OPS.md), written once for
// the op and every backend: input/output indices, attributes with their
// defaults (the schema is built from the same constants), and the check
// on dims and dtypes that returns the named sizes. Layouts: u, delta, z, y
// (B,D,L); A (D,N); Bm, Cm (B,G,N,L); Dskip, delta_bias (D); past/present
// state (B,D,N); D a multiple of G.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "graph/graph.h"
#include "ops/op_schema.h"
#include "ops/sequence/scan_common.h"

namespace seqrt {

struct SelectiveScanInput {
  enum : size_t {
    kU,
    kDelta,
    kA,
    kBm,
    kCm,
    kDskip,      // optional
    kZ,          // optional
    kDeltaBias,  // optional
    kPastState,  // optional
    kCount
  };
};
struct SelectiveScanOutput {
  enum : size_t { kY, kPresentState /* optional */, kCount };
};

struct SelectiveScanAttrs {
  static constexpr const char* kDeltaSoftplusName = "delta_softplus";
  static constexpr int64_t kDeltaSoftplusDefault = 1;

  bool delta_softplus = kDeltaSoftplusDefault != 0;  // Δ = softplus(Δ + bias)

  static SelectiveScanAttrs from(const Node& node);
  // The schema's attributes, from the constants above.
  static std::vector<AttrSpec> specs();
};

// Sizes of a valid node; -1 where only inference runs and the size is not
// known.
struct SelectiveScanDims {
  int64_t batch, channels, length, state, groups;  // B, D, L, N, G
};

// Shapes and dtypes of the inputs (SelectiveScanInput order) against the
// layouts above; errors name the node and the input: "[SelectiveScan] node
// 'x': A must be (D,N) = (64,16), got (64,8)".
Result<SelectiveScanDims> check_selective_scan(const Node& node,
                                               const KernelInputTypes& types);
// The same from a kernel's tensors.
Result<SelectiveScanDims> check_selective_scan(const KernelContext& ctx);

}  // namespace seqrt
