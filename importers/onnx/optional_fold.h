// Optional values resolved at import. seqrt's graphs hold tensors only, so
// each ONNX optional must be known, when importing, to hold a tensor or to
// be empty. `fold_optionals` rewrites the model's GraphProto (subgraphs
// included) before it is converted:
//
//   Optional(x)              -> Identity(x): a present optional is x itself
//   Optional() / Optional("") -> removed: the name is an empty optional
//   OptionalHasElement(v)    -> a bool scalar Constant (true for a tensor or
//                               a present optional, false for an empty one
//                               or no input)
//   OptionalGetElement(v)    -> Identity(v) when v is a tensor or present
//   Identity(empty)          -> removed: its output is empty too
//   If                       -> an output present in both branches is a
//                               tensor; empty in both, it is removed. An
//                               If involving optionals whose condition is
//                               known at import (a folded
//                               OptionalHasElement, a bool Constant or
//                               initializer, Not/Identity of one) is
//                               replaced by the branch taken
//   Loop                     -> a carried optional present on entry and
//                               after the body is a tensor
//
// and declared optional types of present values become their element
// types. Where the presence is known only at run time (an optional graph
// input, an If whose branches differ, a carried value that empties) or the
// model asks for what an empty optional lacks (OptionalGetElement, any
// other op reading it, a graph output), the import is refused with an
// error naming the node, the op, the value and why.
#pragma once

#include <string>

// onnx_pb.h defines ONNX_API, then includes onnx-ml.pb.h (ONNX_ML=1).
#include <onnx/onnx_pb.h>

#include "graph/status.h"

namespace seqrt {

// Rewrites `graph` (a model's main graph) in place; `source` names the
// model in errors.
Status fold_optionals(onnx::GraphProto& graph, const std::string& source);

}  // namespace seqrt
