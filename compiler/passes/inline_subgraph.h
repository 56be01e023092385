// Copies of a subgraph (a RungeKutta body, an If branch, a Scan or Loop
// body) written into the enclosing graph, for backends that run flat
// schedules of kernels (Vulkan, CUDA): see expand_runge_kutta and
// unroll_control_flow.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace seqrt {

// Why `body` cannot be copied into `graph`: a capture `graph` lacks, or a
// nested subgraph that reads a value of `body` by name (the copies rename
// them); "" when it can.
std::string inline_blocker(const Graph& graph, const Graph& body);

// Writes the nodes that take one node's place: fresh values named
// `base`_<what>, ONNX nodes named after the value they produce.
class NodeWriter {
 public:
  NodeWriter(Graph& graph, std::string base)
      : graph_(graph), base_(std::move(base)) {}
  std::vector<Node> take_nodes() { return std::move(nodes_); }

 protected:
  ValueId fresh(const std::string& what);
  void emit(const std::string& op, std::vector<ValueId> inputs, ValueId out,
            AttrMap attrs = {});

  Graph& graph_;
  std::string base_;
  std::vector<Node> nodes_;
};

class SubgraphInliner {
 public:
  // Node and value names of the copies start with `base`.
  SubgraphInliner(Graph& graph, const Graph& body, std::string base);

  // Appends one copy of the body's nodes to `out`: the body's inputs read
  // `inputs`, its captures the values of `graph` of the same name, its
  // constants copies shared by every copy, its other values fresh values
  // named `base`_`prefix`<name>. Returns the values that hold the body's
  // outputs (an input, capture or constant where the body passes one on).
  std::vector<ValueId> inline_copy(const std::vector<ValueId>& inputs,
                                   const std::string& prefix,
                                   std::vector<Node>& out);

 private:
  Graph& graph_;
  const Graph& body_;
  std::string base_;
  std::map<ValueId, ValueId> constants_;  // body constant -> outer copy
};

}  // namespace seqrt
