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
#include "graph/verifier.h"

namespace seqrt {

// Protobuf cannot parse a message of 2 GiB or more; larger weights must be
// stored as external data.
inline constexpr size_t kMaxProtoBytes = (size_t{1} << 31) - 1;
// Protobuf's nesting limit, in messages, sized so that a model whose
// subgraphs nest kMaxSubgraphDepth levels deep (the most
// --max-subgraph-depth allows) parses: each level costs 3 messages
// (GraphProto -> NodeProto -> AttributeProto -> GraphProto), the model's
// graph 1, and the headroom covers what lies below a graph's nodes
// (attribute tensors, value types, nested sequence and map types).
inline constexpr int kMessagesPerSubgraphLevel = 3;
inline constexpr int kProtoNestingHeadroom = 32;
inline constexpr int kMaxProtoRecursion =
    1 + kMessagesPerSubgraphLevel * kMaxSubgraphDepth + kProtoNestingHeadroom;

// The whole file; kNotFound / kIoError name the file.
Result<std::vector<uint8_t>> read_file_bytes(const std::string& path);

// Parses `message` from the file at `path`, read as a stream; errors as
// read_file_bytes and parse_proto give them.
Status parse_proto_file(const std::string& path,
                        google::protobuf::MessageLite& message,
                        const std::string& what);

// Parses `message` from `data`; `what` ("model 'x.onnx'") names the source
// in errors: too large, truncated or garbage bytes, or, for an
// onnx.ModelProto, subgraphs nested past kMaxSubgraphDepth.
Status parse_proto(const uint8_t* data, size_t size,
                   google::protobuf::MessageLite& message,
                   const std::string& what);

}  // namespace seqrt
