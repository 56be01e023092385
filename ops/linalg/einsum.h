// Einsum's equation resolved against its operands, shared by the reference
// kernel and the backends' kernels.
#pragma once

#include <cstddef>
#include <vector>

#include "graph/status.h"
#include "ops/op_context.h"

namespace seqrt {

// A label per dim: a letter is its character code; ellipsis dim i (counted
// within the broadcast ellipsis of all operands) is kEinsumEllipsis + i.
constexpr int kEinsumEllipsis = 256;
using EinsumTerm = std::vector<int>;

struct EinsumLabels {
  std::vector<EinsumTerm> inputs;  // one label per dim of each operand
  EinsumTerm output;               // the implicit output made explicit
};

// Parses the node's `equation` and resolves it for operands of `ranks`;
// errors name what does not match.
Result<EinsumLabels> resolve_einsum(const OpContext& ctx,
                                    const std::vector<size_t>& ranks);

}  // namespace seqrt
