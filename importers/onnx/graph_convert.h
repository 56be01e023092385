// ONNX GraphProto -> Graph: values with their declared types,
// initializers as constants, nodes through the op table, subgraphs with
// their outer-scope reads as captures, model-local functions inlined.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

// onnx_pb.h defines ONNX_API, then includes onnx-ml.pb.h (ONNX_ML=1).
#include <onnx/onnx_pb.h>

#include "graph/graph.h"
#include "graph/progress.h"
#include "graph/status.h"
#include "importers/onnx/function_inline.h"
#include "ops/registry.h"

namespace seqrt {

struct ImportContext {
  std::string source;                 // "model 'x.onnx'", for errors
  std::string model_dir;              // external data folder; empty: refused
  std::map<std::string, int> opsets;  // normalized domain -> opset version
  const FunctionTable* functions = nullptr;
  const OpRegistry* registry = nullptr;
  // The main graph's proto when the importer owns it: each initializer's
  // bytes are freed as soon as they are converted, so the weights are held
  // once during the import rather than twice.
  onnx::GraphProto* releasable_graph = nullptr;
  // One line per node whose op we cannot import, reported together.
  std::vector<std::string> unsupported;
  ProgressFn progress;  // told of each main-graph initializer converted
};

// The enclosing graph under construction, seen from a subgraph. `resolve`
// gives the id there of a name visible in it, capturing the name from
// further out when needed (so every level between a value and its reader
// lists it in its captures), or kNoValue.
struct OuterScope {
  const Graph* graph = nullptr;
  std::function<ValueId(const std::string&)> resolve;
};

// Converts `proto`; `outer` is null for the main graph. Unsupported ops are
// appended to `ctx.unsupported` rather than failing at once.
Result<Graph> convert_graph(const onnx::GraphProto& proto, ImportContext& ctx,
                            const OuterScope* outer);

}  // namespace seqrt
