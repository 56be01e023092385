// LayerNormalization of f32 rows on oneDNN's layer_normalization primitive
// (inference: no statistics outputs), with the scale and the optional
// shift as one row each. RMSNormalization has no oneDNN form: oneDNN 2.6's
// layer normalisation always subtracts the mean (its flag to skip that,
// rms_norm, arrived in 3.x), so RMSNorm keeps the own kernel.
#pragma once

#include <cstdint>
#include <string>

#include "graph/status.h"

namespace seqrt::cpu::onednn {

// y[r] = (x[r] − mean) / sqrt(var + epsilon) · scale + shift for each of
// `rows` rows of `cols`; `shift` may be null. False: oneDNN has no
// primitive for it and nothing was written.
Result<bool> layer_norm(const std::string& label, int64_t rows, int64_t cols,
                        float epsilon, const float* x, const float* scale,
                        const float* shift, float* y);

}  // namespace seqrt::cpu::onednn
