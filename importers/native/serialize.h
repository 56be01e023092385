// Turns a Graph into the .seqrt FlatBuffer plus the list of segments that
// hold its tensors' bytes; writer.cc lays both out in a file or buffer.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/graph.h"
#include "schema/seqrt_generated.h"

namespace seqrt {

struct SerializedModel {
  flatbuffers::DetachedBuffer flatbuffer;
  // Segment i holds the bytes of segment_tensors[i] at segment_offsets[i]
  // (from the start of the segment area, a multiple of 64). Tensors that
  // share storage share a segment.
  std::vector<Tensor> segment_tensors;
  std::vector<uint64_t> segment_offsets;
  uint64_t segments_size = 0;  // the end of the last segment
};

// Fails (naming the tensor) on a tensor without dtype, and when the
// metadata would not fit in a FlatBuffer (2 GiB). `graph` has passed
// verify_graph(), so its value ids are in range and subgraphs are bounded.
Result<SerializedModel> serialize_graph(const Graph& graph);

}  // namespace seqrt
