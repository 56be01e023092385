// Reading ONNX protobuf messages safely: whole files into memory, parsing
// with explicit size limits, and one error style for malformed bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

// onnx_pb.h defines ONNX_API, then includes onnx-ml.pb.h (ONNX_ML=1).
#include <onnx/onnx_pb.h>

#include "graph/status.h"

namespace seqrt {

// Protobuf cannot parse a message of 2 GiB or more; larger weights must be
// stored as external data.
inline constexpr size_t kMaxProtoBytes = (size_t{1} << 31) - 1;
// Protobuf nesting limit: subgraphs inside subgraphs stay far below it.
inline constexpr int kMaxProtoRecursion = 100;

// The whole file; kNotFound / kIoError name the file.
Result<std::vector<uint8_t>> read_file_bytes(const std::string& path);

// Parses `message` from the file at `path`, read as a stream; errors as
// read_file_bytes and parse_proto give them.
Status parse_proto_file(const std::string& path,
                        google::protobuf::MessageLite& message,
                        const std::string& what);

// Parses `message` from `data`; `what` ("model 'x.onnx'") names the source
// in errors: too large, truncated or garbage bytes.
Status parse_proto(const uint8_t* data, size_t size,
                   google::protobuf::MessageLite& message,
                   const std::string& what);

}  // namespace seqrt
