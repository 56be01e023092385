// GatherND's checked plan, shared by the reference kernel (gather_nd.cc)
// and the backends: output slice t is data elements [offsets[t],
// offsets[t] + slice), the output row-major over out_dims.
#pragma once

#include <cstdint>
#include <vector>

#include "ops/op_context.h"
#include "ops/shape/nd_index.h"

namespace seqrt {

struct GatherNdPlan {
  NdSlices slices;
  std::vector<int64_t> out_dims;
};

// Inputs data and indices, attribute batch_dims; every index checked.
Result<GatherNdPlan> plan_gather_nd(const KernelContext& ctx);

}  // namespace seqrt
