// Dead-code elimination: a node is live when one of its outputs reaches a
// graph output (state outputs are graph outputs) through live nodes, as an
// input or captured by name in a live node's subgraph. Dead nodes and the
// constants nothing live reads go; graph inputs always stay, since callers
// feed them by name.
#include <set>
#include <vector>

#include "compiler/passes/passes.h"
#include "compiler/passes/rewrite.h"

namespace seqrt {
namespace {

// Marks live values and nodes, walking back from the graph outputs.
std::vector<bool> live_values(const Graph& graph,
                              std::vector<bool>& live_node) {
  std::vector<bool> live(graph.values.size(), false);
  std::unordered_map<std::string, ValueId> index = graph.value_index();
  std::vector<int> producer = graph.producers();
  std::vector<ValueId> work(graph.outputs.begin(), graph.outputs.end());
  live_node.assign(graph.nodes.size(), false);
  while (!work.empty()) {
    ValueId id = work.back();
    work.pop_back();
    if (id == kNoValue || live[id]) continue;
    live[id] = true;
    int n = producer[id];
    if (n < 0 || live_node[n]) continue;
    live_node[n] = true;
    const Node& node = graph.nodes[n];
    work.insert(work.end(), node.inputs.begin(), node.inputs.end());
    for (const auto& [name, attr] : node.attrs) {
      if (attr.type() != AttrType::kGraph) continue;
      for (const std::string& captured : captured_names(*attr.as_graph())) {
        auto it = index.find(captured);
        if (it != index.end()) work.push_back(it->second);
      }
    }
  }
  return live;
}

Result<bool> eliminate(Graph& graph) {
  SEQRT_ASSIGN_OR_RETURN(bool changed, rewrite_subgraphs(graph, eliminate));
  std::vector<bool> live_node;
  std::vector<bool> live = live_values(graph, live_node);
  std::set<int> dead;
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    if (!live_node[n]) dead.insert(static_cast<int>(n));
  }
  for (auto it = graph.constants.begin(); it != graph.constants.end();) {
    if (live[it->first]) {
      ++it;
      continue;
    }
    it = graph.constants.erase(it);
    changed = true;
  }
  if (dead.empty()) {
    if (changed) compact_values(graph);
    return changed;
  }
  SEQRT_RETURN_IF_ERROR(remove_nodes(graph, dead));
  return true;
}

}  // namespace

Pass eliminate_dead_code_pass() {
  return {"eliminate_dead_code", eliminate, /*repeat=*/false};
}

}  // namespace seqrt
