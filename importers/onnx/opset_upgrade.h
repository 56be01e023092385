// Models at ONNX opsets 7 to 12 (many published models are opset 11-12)
// are converted to opset 13, the oldest the op table covers, by the ONNX
// library's version converter before import.
#pragma once

#include <string>

#include "graph/status.h"
#include "onnx/onnx_pb.h"

namespace seqrt {

inline constexpr int kOldestConvertedOpset = 7;

// Converts `model` in place when its ai.onnx opset is in
// [kOldestConvertedOpset, kMinOnnxOpset); otherwise leaves it unchanged.
// A failed conversion is kUnsupported, naming `source`, the opset and what
// the converter could not adapt.
Status upgrade_old_opset(onnx::ModelProto& model, const std::string& source);

}  // namespace seqrt
