#include "compiler/planner/op_classes.h"

#include <set>
#include <string>

namespace seqrt {
namespace {

bool in_onnx_set(const Node& node, const std::set<std::string>& ops) {
  return node.domain == kOnnxDomain && ops.count(node.op) != 0;
}

}  // namespace

bool is_view_op(const Node& node) {
  static const std::set<std::string> kViews = {"Reshape", "Flatten", "Squeeze",
                                               "Unsqueeze", "Identity"};
  return in_onnx_set(node, kViews);
}

bool is_elementwise_op(const Node& node) {
  // Listed by hand rather than read from the registry: an op belongs here
  // only if every kernel of it tolerates aliasing its output with an input.
  static const std::set<std::string> kElementwise = {
      // unary (ops/elementwise/unary.cc)
      "Sqrt", "Exp", "Log", "Neg", "Abs", "Sign", "Reciprocal", "Erf", "Tanh",
      "Sigmoid", "Relu", "Softplus", "Sin", "Cos", "Floor", "Ceil", "Not",
      "Gelu",
      // binary and variadic (binary.cc, mod.cc, compare.cc)
      "Add", "Sub", "Mul", "Div", "Max", "Min", "Sum", "And", "Or", "Xor",
      "Pow", "Mod", "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual",
      // where.cc, cast.cc
      "Where", "Cast"};
  // A fused chain reads element j of each input before writing output
  // element j, like its parts.
  if (node.domain == kSeqrtDomain && node.op == "FusedElementwise") return true;
  return in_onnx_set(node, kElementwise);
}

}  // namespace seqrt
