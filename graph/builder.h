// Builds graphs in code (samples, tests, importers of our own):
//
//   GraphBuilder b("mlp");
//   ValueId x = b.input("x", DType::kF32, {Dim::symbol("batch"), 64});
//   ValueId w = b.constant("w", weights);
//   ValueId y = b.add("MatMul", {x, w});
//   b.output(b.add("Relu", {y}), "y");
//   Result<Graph> graph = std::move(b).build();  // verified
//
// Node outputs get their types from ops' inference
// (compiler/infer/infer_graph.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace seqrt {

struct NodeOptions {
  std::string name;  // default "<op>_<index>"
  std::string domain = kOnnxDomain;
  std::vector<std::string> output_names;  // default "<name>" / "<name>_<i>"
};

class GraphBuilder {
 public:
  explicit GraphBuilder(std::string name = "main");

  ValueId input(const std::string& name, DType dtype, Shape shape);
  ValueId constant(const std::string& name, Tensor tensor);
  // A value of an enclosing graph that this (sub)graph reads.
  ValueId capture(const std::string& name, DType dtype,
                  std::optional<Shape> shape);

  std::vector<ValueId> add_node(const std::string& op,
                                std::vector<ValueId> inputs, AttrMap attrs,
                                size_t num_outputs, NodeOptions options = {});
  // A node with one output.
  ValueId add(const std::string& op, std::vector<ValueId> inputs,
              AttrMap attrs = {}, NodeOptions options = {});

  // Marks a graph output, renaming the value when `name` is given.
  void output(ValueId id, const std::string& name = "");
  void state_pair(ValueId input, ValueId output,
                  std::optional<Tensor> initial = std::nullopt);
  void set_metadata(const std::string& key, const std::string& value);

  Graph& graph() { return graph_; }
  // The finished graph after verify_graph().
  Result<Graph> build() &&;

 private:
  Graph graph_;
};

}  // namespace seqrt
