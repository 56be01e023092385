// Writes graphs as .seqrt files (layout in schema/README.md).
//
//   SEQRT_RETURN_IF_ERROR(write_seqrt_file(graph, "model.seqrt"));
//
// The graph must pass verify_graph(): a file the writer produces is always
// one the reader accepts (given the same op registry).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/status.h"

namespace seqrt {

// Writes to a temporary file next to `path` and renames it into place, so
// readers that have the old file mapped never see a half-written file.
// Runs of zero bytes in tensor data are left as holes (sparse files).
Status write_seqrt_file(const Graph& graph, const std::string& path);

// The whole file in memory (tests, fuzzing, the C API).
Result<std::vector<uint8_t>> write_seqrt_buffer(const Graph& graph);

}  // namespace seqrt
