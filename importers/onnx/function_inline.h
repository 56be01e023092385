// Model-local ONNX functions (ModelProto.functions) are expanded at each
// call site, unless the registry has an op of the same (domain, name): then
// the node stays and imports as that op (seqrt ops ship their definition in
// standard ONNX as a function, for other runtimes).
#pragma once

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

// onnx_pb.h defines ONNX_API, then includes onnx-ml.pb.h (ONNX_ML=1).
#include <onnx/onnx_pb.h>

#include "graph/status.h"
#include "ops/registry.h"

namespace seqrt {

// Keyed by (normalized domain, name).
using FunctionTable =
    std::map<std::pair<std::string, std::string>, const onnx::FunctionProto*>;

// Returns `nodes` with every call of a function in `functions` replaced by
// the function's body: formal inputs and outputs renamed to the call's
// names, other names made fresh (not in `taken`, which grows), attribute
// references resolved from the call. Nested calls expand too.
Result<std::vector<onnx::NodeProto>> inline_functions(
    const google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes,
    const FunctionTable& functions, const OpRegistry& registry,
    std::set<std::string>& taken);

}  // namespace seqrt
