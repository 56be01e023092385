#include "compiler/lower/node_alone.h"

#include <string>

#include "compiler/passes/rewrite.h"

namespace seqrt {
namespace {

// The Constant node of `graph` that produces `id`, or nullptr.
const Node* constant_node_of(const Graph& graph, ValueId id) {
  for (const Node& node : graph.nodes) {
    if (node.op == "Constant" && node.outputs.size() == 1 &&
        node.outputs[0] == id) {
      return &node;
    }
  }
  return nullptr;
}

}  // namespace

Graph node_alone(const Graph& graph, const Node& node) {
  Graph part;
  Node alone = node;
  auto copy_of = [&](ValueId id) {
    ValueId copy = part.add_value(graph.value(id));
    const Tensor* constant = graph.constant(id);
    const Node* producer = constant_node_of(graph, id);
    if (constant != nullptr) {
      part.constants[copy] = *constant;
    } else if (producer != nullptr) {
      Node made = *producer;
      made.outputs = {copy};
      part.nodes.push_back(std::move(made));
    } else {
      part.inputs.push_back(copy);
    }
    return copy;
  };
  for (ValueId& id : alone.inputs) {
    if (id != kNoValue) id = copy_of(id);
  }
  for (const auto& [name, attr] : node.attrs) {
    if (attr.type() != AttrType::kGraph) continue;
    for (const std::string& read : captured_names(*attr.as_graph())) {
      ValueId id = graph.find_value(read);
      if (id != kNoValue && part.find_value(read) == kNoValue) copy_of(id);
    }
  }
  for (ValueId& id : alone.outputs) {
    if (id == kNoValue) continue;
    id = part.add_value(graph.value(id));
    part.outputs.push_back(id);
  }
  part.nodes.push_back(std::move(alone));  // after the Constant nodes
  return part;
}

}  // namespace seqrt
