#include "compiler/passes/inline_subgraph.h"

#include <set>

#include "compiler/passes/rewrite.h"

namespace seqrt {

std::string inline_blocker(const Graph& graph, const Graph& body) {
  for (ValueId capture : body.captures) {
    if (graph.find_value(body.value(capture).name) == kNoValue) {
      return "it reads '" + body.value(capture).name +
             "', which is not a value of the enclosing graph";
    }
  }
  std::set<std::string> own;
  for (const Value& value : body.values) own.insert(value.name);
  for (ValueId capture : body.captures) own.erase(body.value(capture).name);
  for (const Node& inner : body.nodes) {
    for (const auto& [name, attr] : inner.attrs) {
      if (attr.type() != AttrType::kGraph) continue;
      for (const std::string& read : captured_names(*attr.as_graph())) {
        if (own.count(read)) {
          return "node " + inner.label() + " has a subgraph that reads '" +
                 read + "' of the enclosing body";
        }
      }
    }
  }
  return "";
}

ValueId NodeWriter::fresh(const std::string& what) {
  return add_fresh_value(graph_, base_ + "_" + what);
}

void NodeWriter::emit(const std::string& op, std::vector<ValueId> inputs,
                      ValueId out, AttrMap attrs) {
  Node node;
  node.name = graph_.value(out).name;
  node.op = op;
  node.domain = kOnnxDomain;
  node.inputs = std::move(inputs);
  node.outputs = {out};
  node.attrs = std::move(attrs);
  nodes_.push_back(std::move(node));
}

SubgraphInliner::SubgraphInliner(Graph& graph, const Graph& body,
                                 std::string base)
    : graph_(graph), body_(body), base_(std::move(base)) {}

std::vector<ValueId> SubgraphInliner::inline_copy(
    const std::vector<ValueId>& inputs, const std::string& prefix,
    std::vector<Node>& out) {
  std::map<ValueId, ValueId> outer;
  for (size_t i = 0; i < body_.inputs.size() && i < inputs.size(); ++i) {
    outer[body_.inputs[i]] = inputs[i];
  }
  for (ValueId capture : body_.captures) {
    outer[capture] = graph_.find_value(body_.value(capture).name);
  }
  for (const auto& [id, tensor] : body_.constants) {
    auto shared = constants_.find(id);
    if (shared == constants_.end()) {
      ValueId copy =
          add_fresh_value(graph_, base_ + "_" + body_.value(id).name);
      graph_.constants[copy] = tensor;
      graph_.value(copy).dtype = body_.value(id).dtype;
      graph_.value(copy).shape = body_.value(id).shape;
      shared = constants_.emplace(id, copy).first;
    }
    outer[id] = shared->second;
  }
  for (const Node& inner : body_.nodes) {
    Node copy = inner;
    copy.name =
        base_ + "_" + prefix + (inner.name.empty() ? inner.op : inner.name);
    for (ValueId& id : copy.inputs) {
      if (id != kNoValue) id = outer.at(id);
    }
    for (ValueId& id : copy.outputs) {
      if (id == kNoValue) continue;
      ValueId renamed =
          add_fresh_value(graph_, base_ + "_" + prefix + body_.value(id).name);
      // The body's types, so that control flow it held can be written out
      // before the caller re-infers.
      graph_.value(renamed).dtype = body_.value(id).dtype;
      graph_.value(renamed).shape = body_.value(id).shape;
      outer[id] = renamed;
      id = renamed;
    }
    out.push_back(std::move(copy));
  }
  std::vector<ValueId> results;
  for (ValueId id : body_.outputs) results.push_back(outer.at(id));
  return results;
}

}  // namespace seqrt
