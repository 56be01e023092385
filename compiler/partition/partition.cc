#include "compiler/partition/partition.h"

#include <fmt/format.h>

#include <set>

#include "compiler/passes/rewrite.h"

namespace seqrt {
namespace {

// The nodes each node waits for: producers of its inputs and of the
// values its subgraphs capture by name.
std::vector<std::set<int>> dependencies(const Graph& graph) {
  const std::vector<int> producers = graph.producers();
  const std::unordered_map<std::string, ValueId> index = graph.value_index();
  std::vector<std::set<int>> deps(graph.nodes.size());
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const Node& node = graph.nodes[n];
    for (ValueId id : node.inputs) {
      if (id != kNoValue && producers[id] >= 0) deps[n].insert(producers[id]);
    }
    for (const auto& [name, attr] : node.attrs) {
      if (attr.type() != AttrType::kGraph) continue;
      for (const std::string& captured : captured_names(*attr.as_graph())) {
        auto it = index.find(captured);
        if (it != index.end() && producers[it->second] >= 0) {
          deps[n].insert(producers[it->second]);
        }
      }
    }
  }
  return deps;
}

// A dependency order that keeps each target's nodes together: among the
// nodes ready to run, one on the current target first.
std::vector<std::vector<int>> group_in_order(
    const std::vector<std::set<int>>& deps, const std::vector<int>& target) {
  const size_t count = deps.size();
  std::vector<std::vector<int>> readers(count);
  std::vector<size_t> waiting(count);
  std::set<int> ready;
  for (size_t n = 0; n < count; ++n) {
    waiting[n] = deps[n].size();
    for (int d : deps[n]) readers[d].push_back(static_cast<int>(n));
    if (waiting[n] == 0) ready.insert(static_cast<int>(n));
  }
  std::vector<std::vector<int>> groups;
  int current = -1;
  while (!ready.empty()) {
    int pick = -1;
    for (int n : ready) {
      if (target[n] == current) {
        pick = n;
        break;
      }
    }
    if (pick < 0) {
      pick = *ready.begin();
      current = target[pick];
      groups.emplace_back();
    }
    ready.erase(pick);
    groups.back().push_back(pick);
    for (int r : readers[pick]) {
      if (--waiting[r] == 0) ready.insert(r);
    }
  }
  return groups;
}

class SegmentBuilder {
 public:
  SegmentBuilder(const Graph& graph, const std::vector<int>& segment_of)
      : graph_(graph), segment_of_(segment_of), index_(graph.value_index()) {
    producers_ = graph.producers();
    readers_.resize(graph.values.size());
    for (size_t n = 0; n < graph.nodes.size(); ++n) {
      const Node& node = graph.nodes[n];
      for (ValueId id : node.inputs) {
        if (id != kNoValue) readers_[id].insert(segment_of[n]);
      }
      for (const auto& [name, attr] : node.attrs) {
        if (attr.type() != AttrType::kGraph) continue;
        for (const std::string& captured : captured_names(*attr.as_graph())) {
          auto it = index_.find(captured);
          if (it != index_.end()) readers_[it->second].insert(segment_of[n]);
        }
      }
    }
    for (ValueId id : graph.outputs) is_output_.insert(id);
  }

  Graph build(int segment, const std::vector<int>& nodes,
              const std::string& name) {
    Graph out;
    out.name = name;
    out.metadata = graph_.metadata;
    std::map<ValueId, ValueId> mapped;
    auto use = [&](ValueId id) -> ValueId {
      auto it = mapped.find(id);
      if (it != mapped.end()) return it->second;
      ValueId local = out.add_value(graph_.value(id));
      mapped[id] = local;
      if (const Tensor* tensor = graph_.constant(id)) {
        out.constants[local] = *tensor;
      } else {
        out.inputs.push_back(local);
      }
      return local;
    };
    for (int n : nodes) {
      Node node = graph_.nodes[n];
      for (const auto& [attr_name, attr] : node.attrs) {
        if (attr.type() != AttrType::kGraph) continue;
        for (const std::string& captured : captured_names(*attr.as_graph())) {
          auto it = index_.find(captured);
          if (it != index_.end()) use(it->second);
        }
      }
      for (ValueId& id : node.inputs) {
        if (id != kNoValue) id = use(id);
      }
      for (ValueId& id : node.outputs) {
        if (id == kNoValue) continue;
        ValueId local = out.add_value(graph_.value(id));
        mapped[id] = local;
        const bool read_later =
            is_output_.count(id) != 0 ||
            std::any_of(readers_[id].begin(), readers_[id].end(),
                        [&](int s) { return s != segment; });
        if (read_later) out.outputs.push_back(local);
        id = local;
      }
      out.nodes.push_back(std::move(node));
    }
    return out;
  }

 private:
  const Graph& graph_;
  const std::vector<int>& segment_of_;
  std::unordered_map<std::string, ValueId> index_;
  std::vector<int> producers_;
  std::vector<std::set<int>> readers_;  // per value: segments reading it
  std::set<ValueId> is_output_;
};

}  // namespace

Result<Partition> partition_graph(const Graph& graph,
                                  const std::vector<PartitionTarget>& targets) {
  if (targets.empty()) {
    return invalid_argument("no backend to run graph '{}' on", graph.name);
  }
  Partition partition;
  for (const PartitionTarget& t : targets) partition.targets.push_back(t.name);
  std::vector<std::string> refused;
  for (const Node& node : graph.nodes) {
    int chosen = -1;
    std::string why;
    std::vector<std::string> reasons;
    for (size_t t = 0; t < targets.size() && chosen < 0; ++t) {
      Status ok = targets[t].supports(graph, node);
      if (ok.is_ok()) {
        chosen = static_cast<int>(t);
      } else {
        reasons.push_back(fmt::format("{}: {}", targets[t].name, ok.message()));
        if (t == 0) why = ok.message();
      }
    }
    if (chosen < 0) {
      refused.push_back(
          fmt::format("{} ({})", node.label(), fmt::join(reasons, "; ")));
    }
    partition.node_target.push_back(chosen);
    partition.why.push_back(chosen == 0 ? std::string() : why);
  }
  if (!refused.empty()) {
    return unsupported("no backend of [{}] runs {} node(s) of graph '{}': {}",
                       fmt::join(partition.targets, ", "), refused.size(),
                       graph.name, fmt::join(refused, "; "));
  }
  const std::vector<std::vector<int>> groups =
      group_in_order(dependencies(graph), partition.node_target);
  size_t placed = 0;
  for (const std::vector<int>& g : groups) placed += g.size();
  if (placed != graph.nodes.size()) {
    return invalid_argument("graph '{}' has a cycle", graph.name);
  }
  std::vector<int> segment_of(graph.nodes.size(), -1);
  for (size_t s = 0; s < groups.size(); ++s) {
    for (int n : groups[s]) segment_of[n] = static_cast<int>(s);
  }
  SegmentBuilder builder(graph, segment_of);
  for (size_t s = 0; s < groups.size(); ++s) {
    Segment segment;
    segment.target = partition.node_target[groups[s].front()];
    segment.nodes = groups[s];
    segment.graph = builder.build(static_cast<int>(s), groups[s],
                                  fmt::format("{}_part{}_{}", graph.name, s,
                                              targets[segment.target].name));
    partition.segments.push_back(std::move(segment));
  }
  return partition;
}

uint64_t crossing_bytes(const Partition& partition,
                        const std::vector<PartitionTarget>& targets,
                        const std::map<std::string, int64_t>& bindings,
                        std::vector<std::string>* unknown) {
  uint64_t total = 0;
  for (const Segment& segment : partition.segments) {
    if (targets[segment.target].host_memory) continue;
    std::vector<ValueId> crossing = segment.graph.inputs;
    crossing.insert(crossing.end(), segment.graph.outputs.begin(),
                    segment.graph.outputs.end());
    for (ValueId id : crossing) {
      const Value& value = segment.graph.value(id);
      uint64_t elements = 1;
      bool known = value.shape.has_value();
      for (size_t d = 0; known && d < value.shape->rank(); ++d) {
        const Dim& dim = (*value.shape)[d];
        auto bound =
            dim.is_symbol() ? bindings.find(dim.symbol_name()) : bindings.end();
        if (dim.is_fixed()) {
          elements *= static_cast<uint64_t>(dim.value());
        } else if (bound != bindings.end()) {
          elements *= static_cast<uint64_t>(bound->second);
        } else {
          known = false;
        }
      }
      if (!known) {
        if (unknown != nullptr) unknown->push_back(value.name);
        continue;
      }
      total += elements * dtype_size(value.dtype);
    }
  }
  return total;
}

}  // namespace seqrt
