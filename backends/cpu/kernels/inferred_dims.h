// Output dims of a node as the op's own inference gives them for the
// node's concrete inputs (their shapes and values): the CPU kernels of the
// data-movement ops take their output dims, and every shape error, from it,
// so they cannot drift from the reference.
#pragma once

#include <cstdint>
#include <vector>

#include "ops/op_context.h"
#include "ops/op_schema.h"

namespace seqrt::cpu {

// The op's inference run on the node's concrete inputs (shapes and values);
// its output_values() hold what inference computed (Shape, Size, Constant).
Result<InferContext> infer_on_inputs(const KernelContext& ctx);

// The dims of every output.
Result<std::vector<std::vector<int64_t>>> inferred_output_dims(
    const KernelContext& ctx);

// The dims of output 0.
Result<std::vector<int64_t>> inferred_dims(const KernelContext& ctx);

}  // namespace seqrt::cpu
