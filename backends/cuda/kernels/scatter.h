// Device kernels of the index-tuple ops: ScatterND and ScatterElements
// (the grouped updates of scatter_plan.h applied to `out`, data already
// copied there) and GatherND (slices copied out of data).
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

// GatherND: out[t * slice + j] = data[offsets[t] + j] for t < count,
// j < slice, elements of `element_size` bytes (1, 2, 4 or 8) moved as bits.
// `offsets` is on the device (the checked plan of ops/shape/gather_nd.h).
cudaError_t launch_gather_slices(size_t element_size, const int64_t* offsets,
                                 int64_t count, int64_t slice, const void* data,
                                 void* out, cudaStream_t stream);

}  // namespace seqrt::cuda
