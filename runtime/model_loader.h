// Loading a model file into a type-checked Graph, whatever its format.
//
// The format is told by content first (the .seqrt magic), then by the
// file's extension, so a renamed .seqrt file still loads and a truncated
// one still gets the native reader's precise error. Any other file is read
// as ONNX (protobuf has no magic to test).
#pragma once

#include <string>

#include "graph/graph.h"
#include "graph/progress.h"
#include "graph/status.h"
#include "importers/native/reader.h"

namespace seqrt {

enum class ModelFormat {
  kSeqrt,  // seqrt's own FlatBuffers format
  kOnnx,   // ONNX protobuf: needs the ONNX importer
};

// Which importer `path` needs. kNotFound when the file cannot be opened.
Result<ModelFormat> detect_model_format(const std::string& path);

// Reads the model with the importer its format needs, then runs
// infer_graph() so every value has its dtype and shape.
// `progress` hears of each stage of a long load (an ONNX file's weights).
// `access` says whether a .seqrt file is mapped (weights used in place; the
// file must not change while the graph lives) or copied into memory. ONNX
// files and their external data are always read into memory.
Result<Graph> load_model(const std::string& path,
                         const ProgressFn& progress = {},
                         FileAccess access = FileAccess::kMap);

}  // namespace seqrt
