// Helpers the passes share to read and edit a graph's dataflow. A value is
// used by the nodes that read it as an input, by nodes whose subgraphs
// capture it by name (at any depth), and by the graph's outputs.
#pragma once

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace seqrt {

struct ValueUses {
  // Per value: the indices of the nodes that read it (each node once).
  std::vector<std::vector<int>> consumers;
  // Per value: true for graph outputs (state outputs are graph outputs).
  std::vector<bool> is_output;
  // Per value: the node that produces it, or -1.
  std::vector<int> producer;

  // Readers plus the graph output, if it is one.
  size_t use_count(ValueId id) const {
    return consumers[id].size() + (is_output[id] ? 1 : 0);
  }
};

ValueUses compute_uses(const Graph& graph);

// Names that `subgraph` (and the subgraphs inside it) read from enclosing
// graphs.
std::set<std::string> captured_names(const Graph& subgraph);

// Makes every node that reads `from` read `to` instead. Fails, changing
// nothing, when `from` is a graph output or captured by a subgraph: both
// refer to it by name, which `to` does not have.
Status replace_all_uses(Graph& graph, ValueId from, ValueId to);

// Removes the nodes with these indices (their output values remain, so a
// new node may produce them), then drops values nothing defines or uses
// and puts the nodes in dependency order.
Status remove_nodes(Graph& graph, const std::set<int>& nodes);

// Appends `node`; remove_nodes() or sort_nodes() puts it in order.
int add_node(Graph& graph, Node node);

// Removes the nodes with these indices and adds `added` in their place
// (they may produce the removed nodes' outputs), in dependency order.
Status replace_nodes(Graph& graph, const std::set<int>& nodes,
                     std::vector<Node> added);

// A new untyped value named after `base`, unique in the graph.
ValueId add_fresh_value(Graph& graph, const std::string& base);
// A new constant holding `tensor`, named after `base`, typed as it.
ValueId add_tensor_constant(Graph& graph, const std::string& base,
                            Tensor tensor);

// Puts nodes in dependency order, keeping the existing order where free.
Status sort_nodes(Graph& graph);

// Drops values that nothing defines or uses and renumbers the rest.
void compact_values(Graph& graph);

// Runs `fn` on a copy of each subgraph of every node and swaps the copy in
// when `fn` changed it, leaving alone other graphs that share the original.
Result<bool> rewrite_subgraphs(Graph& graph,
                               const std::function<Result<bool>(Graph&)>& fn);

}  // namespace seqrt
