// Converts a verified .seqrt FlatBuffer into a Graph. It checks what the
// FlatBuffers verifier cannot: enum codes, dims, value indices, unique
// names of attributes and metadata keys, tensor byte ranges (through the
// SegmentTable), subgraph depth, and that the buffer does not expand into
// more data than it holds.
#pragma once

#include <cstddef>
#include <memory>

#include "graph/graph.h"
#include "importers/native/validate.h"
#include "schema/seqrt_generated.h"

namespace seqrt {

// `model` has passed verify_flatbuffer() over `flatbuffer_size` bytes.
// Tensors become views of the segment bytes kept alive by `owner`.
Result<Graph> graph_from_flatbuffer(const fb::Model& model,
                                    size_t flatbuffer_size,
                                    const SegmentTable& segments,
                                    std::shared_ptr<const void> owner);

}  // namespace seqrt
