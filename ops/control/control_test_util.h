// Test helpers for the control-flow ops: typed subgraphs built in code.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>

#include "backends/host/interpreter.h"
#include "compiler/infer/infer_graph.h"
#include "graph/builder.h"
#include "ops/registry.h"

namespace seqrt::op_testing {

// The builder's graph, verified and typed by infer_graph; an empty pointer
// (and a test failure) when either fails.
inline std::shared_ptr<Graph> typed_graph(GraphBuilder builder) {
  Result<Graph> graph = std::move(builder).build();
  EXPECT_TRUE(graph.is_ok()) << graph.status().to_string();
  if (!graph.is_ok()) return nullptr;
  Status status = infer_graph(*graph);
  EXPECT_TRUE(status.is_ok()) << status.to_string();
  if (!status.is_ok()) return nullptr;
  return std::make_shared<Graph>(std::move(graph).value());
}

// Runs a graph as the CPU backend does (bodies prepared, and kept between
// runs in `states`) but with the reference kernels, counting the kernels
// chosen for body nodes: a body prepared again chooses them again.
class PreparingRunner {
 public:
  explicit PreparingRunner(const Graph& graph)
      : graph_(graph), states_(node_states(graph)) {}

  Result<std::vector<Tensor>> run(std::vector<Tensor> inputs) {
    KernelChooser choose = [this](const Node& node, const OpSchema& schema) {
      if (!node.has_subgraphs()) ++choices_;  // body nodes only
      return Result<KernelFn>(KernelFn(schema.reference));
    };
    InterpretOptions options;
    options.prepare_subgraphs = true;
    options.node_states = &states_;
    return interpret_graph(graph_, std::move(inputs), choose, nullptr, options);
  }
  // The reference result: the body interpreted every iteration.
  Result<std::vector<Tensor>> run_unprepared(std::vector<Tensor> inputs) {
    KernelChooser choose = [](const Node&, const OpSchema& schema) {
      return Result<KernelFn>(KernelFn(schema.reference));
    };
    return interpret_graph(graph_, std::move(inputs), choose);
  }
  int64_t choices() const { return choices_; }

 private:
  const Graph& graph_;
  std::vector<std::shared_ptr<NodeStateCache>> states_;
  int64_t choices_ = 0;
};

}  // namespace seqrt::op_testing
