// ONNX import: a ModelProto file or buffer becomes a verified, type-checked
// Graph. ONNX op versions of opsets 13-27 are mapped onto our ops, which
// follow the latest ONNX semantics (see op_table.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "graph/graph.h"
#include "graph/progress.h"
#include "graph/status.h"

namespace seqrt {

// Reads and imports `path`; external data is looked up beside it.
// `progress` hears of each stage and of each weight converted.
Result<Graph> import_onnx_file(const std::string& path,
                               const ProgressFn& progress = {});

// Imports a serialized ModelProto. `model_dir` is the folder external data
// is read from; empty refuses external data.
Result<Graph> import_onnx_buffer(const uint8_t* data, size_t size,
                                 const std::string& model_dir);

}  // namespace seqrt
