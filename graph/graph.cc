#include "graph/graph.h"

#include <fmt/format.h>

namespace seqrt {

std::string Node::label() const {
  if (name.empty()) return fmt::format("[{}]", op);
  return fmt::format("[{}] node '{}'", op, name);
}

bool Node::has_subgraphs() const {
  for (const auto& [name, attr] : attrs) {
    if (attr.type() == AttrType::kGraph) return true;
  }
  return false;
}

ValueId Graph::add_value(Value value) {
  values.push_back(std::move(value));
  return static_cast<ValueId>(values.size() - 1);
}

ValueId Graph::find_value(const std::string& value_name) const {
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i].name == value_name) return static_cast<ValueId>(i);
  }
  return kNoValue;
}

std::unordered_map<std::string, ValueId> Graph::value_index() const {
  std::unordered_map<std::string, ValueId> index;
  index.reserve(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    index.emplace(values[i].name, static_cast<ValueId>(i));
  }
  return index;
}

const Tensor* Graph::constant(ValueId id) const {
  auto it = constants.find(id);
  return it == constants.end() ? nullptr : &it->second;
}

std::vector<int> Graph::producers() const {
  std::vector<int> producer(values.size(), -1);
  for (size_t n = 0; n < nodes.size(); ++n) {
    for (ValueId out : nodes[n].outputs) {
      if (out >= 0 && static_cast<size_t>(out) < values.size()) {
        producer[out] = static_cast<int>(n);
      }
    }
  }
  return producer;
}

namespace {

// Names a node's subgraphs (at any depth) read from enclosing graphs.
void collect_captures(const Node& node, std::vector<std::string>& names) {
  for (const auto& [attr_name, attr] : node.attrs) {
    if (attr.type() != AttrType::kGraph || !attr.as_graph()) continue;
    const Graph& body = *attr.as_graph();
    for (ValueId id : body.captures) {
      if (id >= 0 && static_cast<size_t>(id) < body.values.size()) {
        names.push_back(body.values[id].name);
      }
    }
    for (const Node& inner : body.nodes) collect_captures(inner, names);
  }
}

// The values `node` depends on: its inputs, and the values its
// subgraphs capture by name.
std::vector<ValueId> dependencies(
    const Node& node, const std::unordered_map<std::string, ValueId>* names) {
  std::vector<ValueId> deps = node.inputs;
  if (names == nullptr) return deps;
  std::vector<std::string> captured;
  collect_captures(node, captured);
  for (const std::string& name : captured) {
    auto it = names->find(name);
    if (it != names->end()) deps.push_back(it->second);
  }
  return deps;
}

bool has_subgraphs(const Graph& graph) {
  for (const Node& node : graph.nodes) {
    if (node.has_subgraphs()) return true;
  }
  return false;
}

}  // namespace

Result<std::vector<int>> Graph::topological_order() const {
  // Kahn's algorithm over node -> node edges; stable in node order. A node
  // with subgraphs also waits for the values they capture.
  std::vector<int> producer = producers();
  std::unordered_map<std::string, ValueId> names;
  bool captures = has_subgraphs(*this);
  if (captures) names = value_index();
  std::vector<int> pending(nodes.size(), 0);
  std::vector<std::vector<int>> users(nodes.size());
  for (size_t n = 0; n < nodes.size(); ++n) {
    for (ValueId in : dependencies(nodes[n], captures ? &names : nullptr)) {
      if (in < 0 || static_cast<size_t>(in) >= values.size()) continue;
      int from = producer[in];
      if (from < 0 || from == static_cast<int>(n)) continue;
      users[from].push_back(static_cast<int>(n));
      ++pending[n];
    }
  }
  std::vector<int> order;
  order.reserve(nodes.size());
  for (size_t n = 0; n < nodes.size(); ++n) {
    if (pending[n] == 0) order.push_back(static_cast<int>(n));
  }
  for (size_t head = 0; head < order.size(); ++head) {
    for (int user : users[order[head]]) {
      if (--pending[user] == 0) order.push_back(user);
    }
  }
  if (order.size() != nodes.size()) {
    for (size_t n = 0; n < nodes.size(); ++n) {
      if (pending[n] > 0) {
        return invalid_model("graph '{}' has a cycle through {}", name,
                             nodes[n].label());
      }
    }
  }
  return order;
}

namespace {

bool values_equal(const Value& a, const Value& b) {
  return a.name == b.name && a.dtype == b.dtype && a.shape == b.shape;
}

bool nodes_equal(const Node& a, const Node& b) {
  if (a.name != b.name || a.op != b.op || a.domain != b.domain ||
      a.inputs != b.inputs || a.outputs != b.outputs ||
      a.attrs.size() != b.attrs.size()) {
    return false;
  }
  for (auto ia = a.attrs.begin(), ib = b.attrs.begin(); ia != a.attrs.end();
       ++ia, ++ib) {
    if (ia->first != ib->first || !ia->second.equals(ib->second)) return false;
  }
  return true;
}

bool optional_tensors_equal(const std::optional<Tensor>& a,
                            const std::optional<Tensor>& b) {
  if (a.has_value() != b.has_value()) return false;
  return !a.has_value() || a->same_as(*b);
}

}  // namespace

bool graphs_equal(const Graph& a, const Graph& b) {
  if (a.name != b.name || a.inputs != b.inputs || a.outputs != b.outputs ||
      a.captures != b.captures || a.metadata != b.metadata ||
      a.values.size() != b.values.size() || a.nodes.size() != b.nodes.size() ||
      a.constants.size() != b.constants.size() ||
      a.state_pairs.size() != b.state_pairs.size()) {
    return false;
  }
  for (size_t i = 0; i < a.values.size(); ++i) {
    if (!values_equal(a.values[i], b.values[i])) return false;
  }
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    if (!nodes_equal(a.nodes[i], b.nodes[i])) return false;
  }
  for (auto ia = a.constants.begin(), ib = b.constants.begin();
       ia != a.constants.end(); ++ia, ++ib) {
    if (ia->first != ib->first || !ia->second.same_as(ib->second)) return false;
  }
  for (size_t i = 0; i < a.state_pairs.size(); ++i) {
    const StatePair& pa = a.state_pairs[i];
    const StatePair& pb = b.state_pairs[i];
    if (pa.input != pb.input || pa.output != pb.output ||
        !optional_tensors_equal(pa.initial, pb.initial)) {
      return false;
    }
  }
  return true;
}

}  // namespace seqrt
