// The contract of CausalConvWithState (ONNX opset 27), written once for the
// op and every backend: input/output indices, the attribute with its
// default (the schema is built from the same constants), and the check on
// dims and dtypes that returns the named sizes. Layouts: input, output
// (batch,channels,L); weight (channels,1,k); bias (channels); past/present
// state (batch,channels,k-1), all of the input's dtype.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "graph/graph.h"
#include "ops/op_schema.h"
#include "ops/sequence/scan_common.h"

namespace seqrt {

struct CausalConvInput {
  enum : size_t {
    kInput,
    kWeight,
    kBias,       // optional
    kPastState,  // optional
    kCount
  };
};
struct CausalConvOutput {
  enum : size_t { kOutput, kPresentState /* optional */, kCount };
};

struct CausalConvAttrs {
  static constexpr const char* kActivationName = "activation";
  static constexpr const char* kActivationDefault = "none";

  bool silu = false;  // activation "silu" or "swish" (the same function)

  // An activation other than none, silu or swish is an error naming the
  // node (the schema refuses it too; backends may see unchecked nodes).
  static Result<CausalConvAttrs> from(const Node& node);
  // The schema's attributes, from the constants above.
  static std::vector<AttrSpec> specs();
};

// Sizes of a valid node; -1 where only inference runs and the size is not
// known.
struct CausalConvDims {
  int64_t batch, channels, length, kernel;
};

// Shapes and dtypes of the inputs (CausalConvInput order) against the
// layouts above; errors name the node and the input.
Result<CausalConvDims> check_causal_conv(const Node& node,
                                         const KernelInputTypes& types);
// The same from a kernel's tensors.
Result<CausalConvDims> check_causal_conv(const KernelContext& ctx);

}  // namespace seqrt
