// ONNX TensorProto files (`.pb`), as used by the ONNX node tests and by
// `seqrt run --input NAME=file.pb`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "graph/status.h"
#include "graph/tensor.h"

namespace seqrt {

Result<Tensor> read_tensor_pb_file(const std::string& path);
// `name_for_errors` names the tensor or file in error messages.
Result<Tensor> read_tensor_pb_buffer(const uint8_t* data, size_t size,
                                     const std::string& name_for_errors);
// Writes `tensor` as a TensorProto named `name` (raw_data, little-endian).
Status write_tensor_pb_file(const Tensor& tensor, const std::string& name,
                            const std::string& path);

}  // namespace seqrt
