// seqrt::QuantizedGather's contract (quantized_gather.cc has the math):
// input indices, and the kernel the reference and CPU backends share.
#pragma once

#include <cstddef>

#include "ops/op_context.h"

namespace seqrt {

enum QuantizedGatherInput : size_t {
  kQuantizedGatherW = 0,
  kQuantizedGatherIndices = 1,
  kQuantizedGatherWScale = 2,
  kQuantizedGatherWZeroPoint = 3,
  kQuantizedGatherInputCount = 4,
};

Status run_quantized_gather(KernelContext& ctx);

}  // namespace seqrt
