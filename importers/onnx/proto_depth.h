// How deep an ONNX model's subgraphs nest, read from the raw protobuf
// bytes without parsing them into messages. Used only after a parse has
// failed, to tell "nested past the depth limit" from "corrupt": protobuf
// refuses messages nested past its recursion limit with the same failure
// as garbage bytes.
#pragma once

#include <google/protobuf/io/zero_copy_stream.h>

namespace seqrt {

// The deepest subgraph level in the serialized onnx.ModelProto that
// `input` yields (the main graph is level 0, an If branch in it level 1,
// function bodies count from 0), counting no further than `limit` + 1;
// -1 when the bytes are not well-formed enough to tell.
int onnx_subgraph_depth(google::protobuf::io::ZeroCopyInputStream& input,
                        int limit);

}  // namespace seqrt
