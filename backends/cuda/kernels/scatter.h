// Device kernel of ScatterND and ScatterElements: the grouped updates of
// scatter_plan.h applied to `out` (data already copied there).
#pragma once

#include <cuda_runtime_api.h>

#include "backends/cuda/scatter_plan.h"
#include "graph/dtype.h"

namespace seqrt::cuda {

// kReplace moves bits of any dtype; the reductions compute as the
// reference does: f32 and the 16-bit floats in float (exact for one
// operation, then rounded once to the dtype), f64 in double, integers with
// wrapping sums and products. Bool takes no reduction (the caller checks).
cudaError_t launch_scatter(DType dtype, ScatterCombine combine,
                           const ScatterGroupsView& groups, const void* updates,
                           void* out, cudaStream_t stream);

}  // namespace seqrt::cuda
