// ONNX AttributeProto -> our Attribute. Graph attributes are converted by
// a callback, since subgraphs need the enclosing graph's scope.
#pragma once

#include <functional>
#include <memory>
#include <string>

// onnx_pb.h defines ONNX_API, then includes onnx-ml.pb.h (ONNX_ML=1).
#include <onnx/onnx_pb.h>

#include "graph/attribute.h"
#include "graph/graph.h"
#include "graph/status.h"

namespace seqrt {

using SubgraphFn =
    std::function<Result<std::shared_ptr<Graph>>(const onnx::GraphProto&)>;

// `node_label` ("[Add] node 'a0'") prefixes errors; tensor attributes may
// use external data from `model_dir`.
Result<Attribute> convert_attribute(const onnx::AttributeProto& proto,
                                    const std::string& node_label,
                                    const std::string& model_dir,
                                    const SubgraphFn& convert_subgraph);

}  // namespace seqrt
