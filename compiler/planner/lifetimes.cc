#include "compiler/planner/lifetimes.h"

#include <algorithm>
#include <string>
#include <unordered_map>

namespace seqrt {
namespace {

// Every value of the enclosing graph that `node`'s subgraphs capture. The
// importer lists a value in the captures of every level between its
// definition and its reader, so one level is enough.
std::vector<ValueId> captured_values(
    const Node& node, const std::unordered_map<std::string, ValueId>& index) {
  std::vector<ValueId> captured;
  for (const auto& [name, attr] : node.attrs) {
    if (attr.type() != AttrType::kGraph || !attr.as_graph()) continue;
    const Graph& body = *attr.as_graph();
    for (ValueId id : body.captures) {
      auto it = index.find(body.value(id).name);
      if (it != index.end()) captured.push_back(it->second);
    }
  }
  return captured;
}

}  // namespace

Result<std::vector<MemoryKind>> base_value_kinds(const Graph& graph) {
  std::vector<MemoryKind> kinds(graph.values.size(), MemoryKind::kUnused);
  std::vector<bool> read(graph.values.size(), false);
  for (const Node& node : graph.nodes) {
    for (ValueId id : node.outputs) {
      if (id != kNoValue) kinds[id] = MemoryKind::kArena;
    }
    for (ValueId id : node.inputs) {
      if (id != kNoValue) read[id] = true;
    }
  }
  for (ValueId id : graph.inputs) kinds[id] = MemoryKind::kIo;
  for (ValueId id : graph.outputs) kinds[id] = MemoryKind::kIo;
  for (const StatePair& pair : graph.state_pairs) {
    kinds[pair.input] = MemoryKind::kState;
    kinds[pair.output] = MemoryKind::kState;
  }
  for (const auto& [id, tensor] : graph.constants) {
    kinds[id] = MemoryKind::kConstant;
  }
  for (size_t id = 0; id < kinds.size(); ++id) {
    if (read[id] && kinds[id] == MemoryKind::kUnused) {
      return invalid_model(
          "graph '{}': value '{}' is read but no node, input or constant "
          "provides it",
          graph.name, graph.values[id].name);
    }
  }
  return kinds;
}

Result<std::vector<Lifetime>> value_lifetimes(
    const Graph& graph, const std::vector<int>& schedule) {
  const int num_steps = static_cast<int>(schedule.size());
  std::vector<Lifetime> lifetimes(graph.values.size());
  std::vector<bool> ready(graph.values.size(), false);
  for (ValueId id : graph.inputs) ready[id] = true;
  for (const auto& [id, tensor] : graph.constants) ready[id] = true;
  std::vector<bool> scheduled(graph.nodes.size(), false);
  const std::unordered_map<std::string, ValueId> index = graph.value_index();
  for (int step = 0; step < num_steps; ++step) {
    const int n = schedule[step];
    if (n < 0 || n >= static_cast<int>(graph.nodes.size()) || scheduled[n]) {
      return invalid_argument(
          "graph '{}': schedule step {} names node {}, which is out of range "
          "or scheduled twice",
          graph.name, step, n);
    }
    scheduled[n] = true;
    const Node& node = graph.nodes[n];
    std::vector<ValueId> reads = captured_values(node, index);
    reads.insert(reads.end(), node.inputs.begin(), node.inputs.end());
    for (ValueId id : reads) {
      if (id == kNoValue) continue;
      if (!ready[id]) {
        return invalid_argument(
            "{}: reads '{}' at schedule step {}, before it is produced",
            node.label(), graph.value(id).name, step);
      }
      lifetimes[id].last = std::max(lifetimes[id].last, step);
    }
    for (ValueId id : node.outputs) {
      if (id == kNoValue) continue;
      ready[id] = true;
      lifetimes[id] = {step, step};
    }
  }
  if (std::count(scheduled.begin(), scheduled.end(), true) !=
      static_cast<std::ptrdiff_t>(graph.nodes.size())) {
    return invalid_argument("graph '{}': the schedule has {} of its {} nodes",
                            graph.name, num_steps, graph.nodes.size());
  }
  for (ValueId id : graph.outputs) {
    lifetimes[id].last = std::max(lifetimes[id].last, num_steps);
  }
  return lifetimes;
}

ValueId alias_root(const MemoryPlan& plan, ValueId id) {
  // Aliases point to values produced earlier, so the chain ends; the bound
  // guards a corrupt plan given to the validator.
  for (size_t hops = 0; hops <= plan.values.size(); ++hops) {
    const ValueId next = plan.values[id].alias_of;
    if (next == kNoValue) return id;
    id = next;
  }
  return kNoValue;
}

}  // namespace seqrt
