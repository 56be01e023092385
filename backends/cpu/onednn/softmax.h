// Softmax and LogSoftmax along one axis of an f32 row-major tensor on
// oneDNN's softmax_v2 primitive (algorithms softmax_accurate and
// softmax_log: the max is subtracted first, as in the own kernel).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/status.h"

namespace seqrt::cpu::onednn {

// y = softmax(x) (log_softmax when `log`) along `axis` of `dims`. False:
// oneDNN has no primitive for it and nothing was written. `label` names
// the node in errors.
Result<bool> softmax(const std::string& label, const std::vector<int64_t>& dims,
                     int64_t axis, bool log, const float* x, float* y);

}  // namespace seqrt::cpu::onednn
