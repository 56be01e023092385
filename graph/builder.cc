#include "graph/builder.h"

#include <fmt/format.h>

#include "graph/verifier.h"

namespace seqrt {

GraphBuilder::GraphBuilder(std::string name) { graph_.name = std::move(name); }

ValueId GraphBuilder::input(const std::string& name, DType dtype, Shape shape) {
  ValueId id = graph_.add_value(Value{name, dtype, std::move(shape)});
  graph_.inputs.push_back(id);
  return id;
}

ValueId GraphBuilder::constant(const std::string& name, Tensor tensor) {
  ValueId id = graph_.add_value(Value{name, tensor.dtype(), tensor.shape()});
  graph_.constants.emplace(id, std::move(tensor));
  return id;
}

ValueId GraphBuilder::capture(const std::string& name, DType dtype,
                              std::optional<Shape> shape) {
  ValueId id = graph_.add_value(Value{name, dtype, std::move(shape)});
  graph_.captures.push_back(id);
  return id;
}

std::vector<ValueId> GraphBuilder::add_node(const std::string& op,
                                            std::vector<ValueId> inputs,
                                            AttrMap attrs, size_t num_outputs,
                                            NodeOptions options) {
  Node node;
  node.name = options.name.empty()
                  ? fmt::format("{}_{}", op, graph_.nodes.size())
                  : options.name;
  node.op = op;
  node.domain = options.domain;
  node.inputs = std::move(inputs);
  node.attrs = std::move(attrs);
  for (size_t i = 0; i < num_outputs; ++i) {
    std::string value_name;
    if (i < options.output_names.size()) {
      value_name = options.output_names[i];
    } else {
      value_name =
          num_outputs == 1 ? node.name : fmt::format("{}_{}", node.name, i);
    }
    node.outputs.push_back(graph_.add_value(Value{value_name, {}, {}}));
  }
  std::vector<ValueId> outputs = node.outputs;
  graph_.nodes.push_back(std::move(node));
  return outputs;
}

ValueId GraphBuilder::add(const std::string& op, std::vector<ValueId> inputs,
                          AttrMap attrs, NodeOptions options) {
  return add_node(op, std::move(inputs), std::move(attrs), 1,
                  std::move(options))[0];
}

void GraphBuilder::output(ValueId id, const std::string& name) {
  if (!name.empty()) graph_.value(id).name = name;
  graph_.outputs.push_back(id);
}

void GraphBuilder::state_pair(ValueId input, ValueId output,
                              std::optional<Tensor> initial) {
  graph_.state_pairs.push_back(StatePair{input, output, std::move(initial)});
}

void GraphBuilder::set_metadata(const std::string& key,
                                const std::string& value) {
  graph_.metadata[key] = value;
}

Result<Graph> GraphBuilder::build() && {
  // A graph with captures is a subgraph; its scope is checked when the
  // enclosing graph is verified.
  SEQRT_RETURN_IF_ERROR(verify_graph(graph_, !graph_.captures.empty()));
  return std::move(graph_);
}

}  // namespace seqrt
