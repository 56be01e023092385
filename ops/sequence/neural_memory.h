// The contract of seqrt::NeuralMemory (Titans long-term memory, OPS.md),
// written once for the op and every backend: input/output indices,
// attributes with their defaults (the schema is built from the same
// constants), the check on dims and dtypes that returns the sizes of a
// call, and the activation functions with their derivatives.
#pragma once

#include <cmath>
#include <cstdint>

#include <string>
#include <vector>

#include "graph/graph.h"
#include "ops/op_schema.h"
#include "ops/sequence/scan_common.h"

namespace seqrt {

// Input order of the op (OPS.md).
enum NeuralMemoryInput : size_t {
  kNmQ = 0,
  kNmK,
  kNmV,
  kNmTheta,
  kNmEta,
  kNmAlpha,
  kNmW1,
  kNmW2,
  kNmPastState,
  kNmPosition,  // optional, i64 (B)
  kNmCount
};
enum NeuralMemoryOutput : size_t { kNmY = 0, kNmPresentState /* optional */ };

struct NeuralMemoryAttrs {
  static constexpr const char* kDepthName = "depth";
  static constexpr const char* kActivationName = "activation";
  static constexpr const char* kChunkSizeName = "chunk_size";
  static constexpr const char* kRetrieveName = "retrieve";
  static constexpr int64_t kDepthDefault = 2;
  static constexpr const char* kActivationDefault = "gelu";  // or "silu"
  static constexpr int64_t kChunkSizeDefault = 1;
  static constexpr const char* kRetrieveDefault = "after_update";

  int64_t depth = kDepthDefault;
  bool gelu = true;  // else SiLU
  int64_t chunk_size = kChunkSizeDefault;
  bool retrieve_before = false;  // retrieve "before_update"

  // depth other than 1 or 2, chunk_size < 1: an error naming the node.
  static Result<NeuralMemoryAttrs> from(const Node& node);
  // The schema's attributes, from the constants above.
  static std::vector<AttrSpec> specs();
};

struct NeuralMemoryDims {
  int64_t batch = 0;
  int64_t heads = 0;
  int64_t seq = 0;    // T
  int64_t d = 0;      // key/value/query width
  int64_t m = 0;      // hidden width of the memory MLP
  int depth = 2;      // 1: M(x) = x·W1; 2: M(x) = act(x·W1)·W2
  int64_t chunk = 1;  // tokens sharing one anchor, aligned to positions
  bool gelu = true;   // else SiLU
  bool retrieve_before = false;  // y_t = M_{t-1}(q_t)
  // Weights per head: d·m, plus m·d for depth 2. The state of one (b, h) is
  // 3·params floats: the weights, the momentum S, the anchor weights.
  int64_t params() const { return depth == 2 ? 2 * d * m : d * m; }
};

// Checks concrete input dims and dtypes (NeuralMemoryInput order) and the
// attributes, and returns the sizes; errors name the node.
Result<NeuralMemoryDims> check_neural_memory(const Node& node,
                                             const KernelInputTypes& types);
// The same from a kernel's tensors, position values (>= 0) included.
Result<NeuralMemoryDims> check_neural_memory(const KernelContext& ctx);

// The dtype of present_state: f64 when q is f64 (so the fp64 reference keeps
// its precision), else f32 (OPS.md: state stays fp32).
DType neural_memory_state_dtype(DType q_dtype);

// Exact GELU x·Φ(x) and SiLU x·σ(x), with their derivatives.
template <typename T>
inline T nm_activation(T x, bool gelu) {
  if (gelu) {
    return T(0.5) * x * (T(1) + std::erf(x * T(0.70710678118654752440)));
  }
  return x / (T(1) + std::exp(-x));
}

template <typename T>
inline T nm_activation_derivative(T x, bool gelu) {
  if (gelu) {
    T cdf = T(0.5) * (T(1) + std::erf(x * T(0.70710678118654752440)));
    T pdf = T(0.39894228040143267794) * std::exp(T(-0.5) * x * x);
    return cdf + x * pdf;
  }
  T sigmoid = T(1) / (T(1) + std::exp(-x));
  return sigmoid * (T(1) + x * (T(1) - sigmoid));
}

}  // namespace seqrt
