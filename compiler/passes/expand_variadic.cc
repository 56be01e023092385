#include "compiler/passes/expand_variadic.h"

#include <set>
#include <string>
#include <vector>

#include "compiler/passes/rewrite.h"

namespace seqrt {

bool is_variadic_to_expand(const Node& node) {
  if (node.domain != kOnnxDomain) return false;
  if (node.op == "Sum") return true;
  return (node.op == "Max" || node.op == "Min") && node.inputs.size() != 2;
}

namespace {

Node make_node(const std::string& name, const std::string& op,
               std::vector<ValueId> inputs, ValueId output) {
  Node node;
  node.name = name;
  node.op = op;
  node.domain = kOnnxDomain;
  node.inputs = std::move(inputs);
  node.outputs = {output};
  return node;
}

// The replacement of one node, appended to `added`.
void expand(Graph& graph, const Node& node, std::vector<Node>& added) {
  const std::string base = node.name.empty() ? node.op : node.name;
  const ValueId out = node.outputs[0];
  const std::string op = node.op == "Sum" ? "Add" : node.op;
  const size_t n = node.inputs.size();
  if (n == 1) {
    added.push_back(make_node(base, "Identity", {node.inputs[0]}, out));
    return;
  }
  ValueId acc = node.inputs[0];
  for (size_t i = 1; i < n; ++i) {
    ValueId next =
        i + 1 == n
            ? out
            : add_fresh_value(graph, base + "_partial" + std::to_string(i));
    added.push_back(
        make_node(graph.value(next).name, op, {acc, node.inputs[i]}, next));
    acc = next;
  }
}

}  // namespace

Result<bool> expand_variadic(Graph& graph) {
  std::set<int> expanded;
  std::vector<Node> added;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node node = graph.nodes[i];  // a copy: expand() adds values
    if (!is_variadic_to_expand(node) || node.inputs.empty()) continue;
    expand(graph, node, added);
    expanded.insert(static_cast<int>(i));
  }
  if (expanded.empty()) return false;
  SEQRT_RETURN_IF_ERROR(replace_nodes(graph, expanded, std::move(added)));
  return true;
}

}  // namespace seqrt
