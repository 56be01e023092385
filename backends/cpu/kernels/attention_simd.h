// Vectorised loops of the CPU attention kernel that vec.h does not have.
#pragma once

#include <cstddef>

namespace seqrt::cpu {

// x = cap * tanh(x / cap) (logit soft-capping; cap > 0).
void softcap_inplace(float* x, size_t n, float cap);

}  // namespace seqrt::cpu
