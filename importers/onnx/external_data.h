// ONNX external data: tensor bytes kept in a file beside the model. Only
// files inside the model's folder are read, so a model cannot make seqrt
// read arbitrary files.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

// onnx_pb.h defines ONNX_API, then includes onnx-ml.pb.h (ONNX_ML=1).
#include <onnx/onnx_pb.h>

#include "graph/status.h"

namespace seqrt {

// Reads `byte_count` bytes of `tensor`'s external data (the `location`,
// `offset` and `length` entries) into `out`. `model_dir` empty refuses
// external data; absolute paths, `..` components and symlinks leading out
// of `model_dir` are refused; the file must hold the bytes.
Status read_external_data(const onnx::TensorProto& tensor,
                          const std::string& model_dir, size_t byte_count,
                          void* out);

}  // namespace seqrt
