#include "compiler/passes/rewrite.h"

#include <algorithm>
#include <map>
#include <memory>
#include <unordered_map>

namespace seqrt {

std::set<std::string> captured_names(const Graph& subgraph) {
  std::set<std::string> names;
  for (ValueId id : subgraph.captures) names.insert(subgraph.value(id).name);
  // A nested subgraph may read an outer value this one never declares.
  std::unordered_map<std::string, ValueId> own = subgraph.value_index();
  for (const Node& node : subgraph.nodes) {
    for (const auto& [attr_name, attr] : node.attrs) {
      if (attr.type() != AttrType::kGraph) continue;
      for (const std::string& name : captured_names(*attr.as_graph())) {
        auto it = own.find(name);
        bool defined_here =
            it != own.end() &&
            std::find(subgraph.captures.begin(), subgraph.captures.end(),
                      it->second) == subgraph.captures.end();
        if (!defined_here) names.insert(name);
      }
    }
  }
  return names;
}

ValueUses compute_uses(const Graph& graph) {
  ValueUses uses;
  uses.consumers.resize(graph.values.size());
  uses.is_output.assign(graph.values.size(), false);
  uses.producer = graph.producers();
  std::unordered_map<std::string, ValueId> index;
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const Node& node = graph.nodes[n];
    std::set<ValueId> read;
    for (ValueId id : node.inputs) {
      if (id != kNoValue) read.insert(id);
    }
    for (const auto& [attr_name, attr] : node.attrs) {
      if (attr.type() != AttrType::kGraph) continue;
      if (index.empty()) index = graph.value_index();
      for (const std::string& name : captured_names(*attr.as_graph())) {
        auto it = index.find(name);
        if (it != index.end()) read.insert(it->second);
      }
    }
    for (ValueId id : read) uses.consumers[id].push_back(static_cast<int>(n));
  }
  for (ValueId id : graph.outputs) uses.is_output[id] = true;
  return uses;
}

Status replace_all_uses(Graph& graph, ValueId from, ValueId to) {
  ValueUses uses = compute_uses(graph);
  if (uses.is_output[from]) {
    return internal_error("cannot replace '{}': it is a graph output",
                          graph.value(from).name);
  }
  for (int n : uses.consumers[from]) {
    Node& node = graph.nodes[n];
    if (std::find(node.inputs.begin(), node.inputs.end(), from) ==
        node.inputs.end()) {
      return internal_error("cannot replace '{}': {} captures it by name",
                            graph.value(from).name, node.label());
    }
  }
  for (int n : uses.consumers[from]) {
    for (ValueId& id : graph.nodes[n].inputs) {
      if (id == from) id = to;
    }
  }
  return Status::ok();
}

int add_node(Graph& graph, Node node) {
  graph.nodes.push_back(std::move(node));
  return static_cast<int>(graph.nodes.size()) - 1;
}

ValueId add_fresh_value(Graph& graph, const std::string& base) {
  std::unordered_map<std::string, ValueId> index = graph.value_index();
  std::string name = base;
  for (int i = 1; index.count(name) != 0; ++i) {
    name = base + "_" + std::to_string(i);
  }
  return graph.add_value(Value{name, DType::kUndefined, std::nullopt});
}

ValueId add_tensor_constant(Graph& graph, const std::string& base,
                            Tensor tensor) {
  ValueId id = add_fresh_value(graph, base);
  graph.value(id).dtype = tensor.dtype();
  graph.value(id).shape = tensor.shape();
  graph.constants[id] = std::move(tensor);
  return id;
}

Status sort_nodes(Graph& graph) {
  SEQRT_ASSIGN_OR_RETURN(std::vector<int> order, graph.topological_order());
  std::vector<Node> sorted;
  sorted.reserve(order.size());
  for (int n : order) sorted.push_back(std::move(graph.nodes[n]));
  graph.nodes = std::move(sorted);
  return Status::ok();
}

void compact_values(Graph& graph) {
  std::vector<bool> keep(graph.values.size(), false);
  auto mark = [&](ValueId id) {
    if (id != kNoValue) keep[id] = true;
  };
  for (ValueId id : graph.inputs) mark(id);
  for (ValueId id : graph.outputs) mark(id);
  for (ValueId id : graph.captures) mark(id);
  for (const auto& [id, tensor] : graph.constants) mark(id);
  for (const StatePair& pair : graph.state_pairs) {
    mark(pair.input);
    mark(pair.output);
  }
  for (const Node& node : graph.nodes) {
    for (ValueId id : node.inputs) mark(id);
    for (ValueId id : node.outputs) mark(id);
  }
  std::vector<ValueId> new_id(graph.values.size(), kNoValue);
  std::vector<Value> values;
  for (size_t id = 0; id < graph.values.size(); ++id) {
    if (!keep[id]) continue;
    new_id[id] = static_cast<ValueId>(values.size());
    values.push_back(std::move(graph.values[id]));
  }
  if (values.size() == graph.values.size()) {
    graph.values = std::move(values);
    return;
  }
  auto remap = [&](ValueId& id) {
    if (id != kNoValue) id = new_id[id];
  };
  graph.values = std::move(values);
  for (ValueId& id : graph.inputs) remap(id);
  for (ValueId& id : graph.outputs) remap(id);
  for (ValueId& id : graph.captures) remap(id);
  std::map<ValueId, Tensor> constants;
  for (auto& [id, tensor] : graph.constants) constants[new_id[id]] = tensor;
  graph.constants = std::move(constants);
  for (StatePair& pair : graph.state_pairs) {
    remap(pair.input);
    remap(pair.output);
  }
  for (Node& node : graph.nodes) {
    for (ValueId& id : node.inputs) remap(id);
    for (ValueId& id : node.outputs) remap(id);
  }
}

Status remove_nodes(Graph& graph, const std::set<int>& nodes) {
  std::vector<Node> kept;
  kept.reserve(graph.nodes.size());
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    if (nodes.count(static_cast<int>(n)) == 0) {
      kept.push_back(std::move(graph.nodes[n]));
    }
  }
  graph.nodes = std::move(kept);
  compact_values(graph);
  return sort_nodes(graph);
}

Status replace_nodes(Graph& graph, const std::set<int>& nodes,
                     std::vector<Node> added) {
  for (Node& node : added) add_node(graph, std::move(node));
  return remove_nodes(graph, nodes);
}

Result<bool> rewrite_subgraphs(Graph& graph,
                               const std::function<Result<bool>(Graph&)>& fn) {
  bool changed = false;
  for (Node& node : graph.nodes) {
    for (auto& [attr_name, attr] : node.attrs) {
      if (attr.type() != AttrType::kGraph) continue;
      Graph copy = *attr.as_graph();
      SEQRT_ASSIGN_OR_RETURN(bool sub_changed, fn(copy));
      if (!sub_changed) continue;
      attr = Attribute(std::make_shared<Graph>(std::move(copy)));
      changed = true;
    }
  }
  return changed;
}

}  // namespace seqrt
