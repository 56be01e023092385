// The activation functions of the ONNX recurrent ops, by name in their
// `activations` attribute. A header of its own, with no includes, so that
// device code (backends/cuda/rnn_plan.h) uses the same enum as the
// reference kernel instead of restating it.
#pragma once

namespace seqrt {

enum class RnnActivationFn : int {
  kRelu,
  kTanh,
  kSigmoid,
  kAffine,
  kLeakyRelu,
  kThresholdedRelu,
  kScaledTanh,
  kHardSigmoid,
  kElu,
  kSoftsign,
  kSoftplus
};

}  // namespace seqrt
