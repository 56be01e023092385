#include "compiler/partition/partition.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "compiler/infer/infer_graph.h"
#include "compiler/partition/light_islands.h"
#include "compiler/passes/rewrite.h"
#include "compiler/planner/bind_dims.h"

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
// nodes ready to run, one on the current target first. A node `alone`
// makes a group of its own.
std::vector<std::vector<int>> group_in_order(
    const std::vector<std::set<int>>& deps, const std::vector<int>& target,
    const std::vector<bool>& alone) {
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
      if (target[n] == current && !alone[n]) {
        pick = n;
        break;
      }
    }
    if (pick < 0) {
      pick = *ready.begin();
      current = alone[pick] ? -1 : target[pick];
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

// Whether `graph` or a subgraph in it holds a heavy op (light_islands.h).
bool holds_heavy_op(const Graph& graph) {
  for (const Node& node : graph.nodes) {
    if (!node.has_subgraphs() && is_heavy_op(node)) return true;
    for (const auto& [name, attr] : node.attrs) {
      if (attr.type() == AttrType::kGraph && holds_heavy_op(*attr.as_graph())) {
        return true;
      }
    }
  }
  return false;
}

// The If and Loop nodes the runtime runs from the host, their subgraphs
// partitioned again (Segment::control): on a host target after a device
// one, with a heavy op in a branch or the body.
std::vector<bool> control_nodes(const Graph& graph,
                                const std::vector<PartitionTarget>& targets,
                                const std::vector<int>& node_target) {
  std::vector<bool> control(graph.nodes.size(), false);
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const Node& node = graph.nodes[n];
    const int t = node_target[n];
    if ((node.op != "If" && node.op != "Loop") || !node.domain.empty() ||
        !targets[t].host_memory) {
      continue;
    }
    bool device_before = false;
    for (int e = 0; e < t; ++e) device_before |= !targets[e].host_memory;
    if (!device_before) continue;
    for (const char* branch : {"then_branch", "else_branch", "body"}) {
      const Attribute* attr = node.attr(branch);
      if (attr != nullptr && attr->type() == AttrType::kGraph &&
          holds_heavy_op(*attr->as_graph())) {
        control[n] = true;
      }
    }
  }
  return control;
}

// Shape arithmetic (Shape -> Gather -> Concat -> Reshape's shape) is
// copied into each segment that reads it rather than crossing: a backend
// that records every size in advance needs such a value computed from its
// own inputs' shapes, not fed as data. A parameter node has only small
// integer outputs and no subgraph.
constexpr int64_t kMaxParameterElements = 64;
// Partitions tried before the last is kept (each refines the one before
// by what the targets refused in their segments).
constexpr int kMaxRounds = 8;

bool is_parameter_node(const Graph& graph, const Node& node) {
  if (node.has_subgraphs() || node.outputs.empty()) return false;
  for (ValueId id : node.outputs) {
    if (id == kNoValue) continue;
    const Value& v = graph.value(id);
    if (!is_integer(v.dtype) || !v.shape || !v.shape->is_fixed()) return false;
    int64_t elements = 1;
    for (int64_t d : v.shape->fixed_dims()) elements *= d;
    if (elements > kMaxParameterElements) return false;
  }
  return true;
}

// A segment's own types: an input dim the whole graph could not size (a
// value an If or a data-dependent op made) gets a symbol of its own, bound
// from the fed tensor at run time; values whose dims use a symbol none of
// the segment's inputs has are inferred again from the inputs, so a
// backend that sizes everything before it runs can. Kept as it was when
// that inference fails.
void retype(Graph& segment) {
  std::set<std::string> symbols;
  for (ValueId id : segment.inputs) {
    Value& v = segment.value(id);
    if (!v.shape) continue;
    for (size_t d = 0; d < v.shape->rank(); ++d) {
      Dim& dim = (*v.shape)[d];
      if (dim.is_unknown())
        dim = Dim::symbol(fmt::format("{}_dim{}", v.name, d));
      if (dim.is_symbol()) symbols.insert(dim.symbol_name());
    }
  }
  Graph retyped = segment;
  bool cleared = false;
  const std::set<ValueId> inputs(segment.inputs.begin(), segment.inputs.end());
  for (size_t id = 0; id < retyped.values.size(); ++id) {
    Value& v = retyped.values[id];
    if (inputs.count(static_cast<ValueId>(id)) ||
        retyped.is_constant(static_cast<ValueId>(id)) || !v.shape) {
      continue;
    }
    for (const Dim& dim : v.shape->dims()) {
      if (dim.is_unknown() ||
          (dim.is_symbol() && !symbols.count(dim.symbol_name()))) {
        v.shape.reset();
        cleared = true;
        break;
      }
    }
  }
  if (cleared && infer_graph(retyped).is_ok()) segment = std::move(retyped);
}

class SegmentBuilder {
 public:
  // `no_copy`: per segment, the parameter nodes not to copy into it (its
  // target refused them there).
  SegmentBuilder(const Graph& graph, const std::vector<int>& segment_of,
                 const std::vector<std::vector<int>>& groups,
                 std::vector<std::set<int>> no_copy)
      : graph_(graph),
        segment_of_(segment_of),
        index_(graph.value_index()),
        no_copy_(std::move(no_copy)) {
    producers_ = graph.producers();
    for (ValueId id : graph.outputs) is_output_.insert(id);
    graph_inputs_.insert(graph.inputs.begin(), graph.inputs.end());
    // Each segment's nodes with its parameter copies; then which segments
    // read each value from outside themselves.
    readers_.resize(graph.values.size());
    for (size_t s = 0; s < groups.size(); ++s) {
      full_.push_back(with_parameters(static_cast<int>(s), groups[s]));
      std::set<ValueId> produced;
      for (int n : full_.back()) {
        const Node& node = graph.nodes[n];
        auto read = [&](ValueId id) {
          if (id != kNoValue && !produced.count(id)) readers_[id].insert(s);
        };
        for (ValueId id : node.inputs) read(id);
        for (const auto& [name, attr] : node.attrs) {
          if (attr.type() != AttrType::kGraph) continue;
          for (const std::string& captured : captured_names(*attr.as_graph())) {
            auto it = index_.find(captured);
            if (it != index_.end()) read(it->second);
          }
        }
        produced.insert(node.outputs.begin(), node.outputs.end());
      }
    }
  }

  // The parameter nodes computing `id` from constants and graph inputs,
  // appended to `chain` in dependency order; false when something else
  // feeds it.
  bool parameter_chain(ValueId id, std::vector<int>& chain,
                       std::set<int>& seen) const {
    // Copies go into segment_ (set by with_parameters).
    if (graph_.is_constant(id) || is_graph_input(id)) return true;
    const int n = producers_[id];
    if (n < 0 || !is_parameter_node(graph_, graph_.nodes[n])) return false;
    if (seen.count(n)) return true;
    if (no_copy_[segment_].count(n)) return false;
    for (ValueId in : graph_.nodes[n].inputs) {
      if (in != kNoValue && !parameter_chain(in, chain, seen)) return false;
    }
    seen.insert(n);
    chain.push_back(n);
    return true;
  }

  // The segment's nodes preceded by copies of the parameter nodes it reads
  // from other segments.
  std::vector<int> with_parameters(int segment, const std::vector<int>& nodes) {
    segment_ = segment;
    std::vector<int> chain;
    std::set<int> seen;
    for (int n : nodes) {
      for (ValueId in : graph_.nodes[n].inputs) {
        if (in == kNoValue || producers_[in] < 0 ||
            segment_of_[producers_[in]] == segment) {
          continue;
        }
        std::vector<int> part;
        std::set<int> part_seen = seen;
        if (parameter_chain(in, part, part_seen)) {
          chain.insert(chain.end(), part.begin(), part.end());
          seen = std::move(part_seen);
        }
      }
    }
    std::vector<int> all;
    for (int n : chain) {
      if (segment_of_[n] != segment) all.push_back(n);
    }
    all.insert(all.end(), nodes.begin(), nodes.end());
    return all;
  }

  // The nodes of the whole graph `build` copies for segment s, in order.
  const std::vector<int>& full(int s) const { return full_[s]; }

  Graph build(int segment, const std::string& name) {
    const std::vector<int>& nodes = full_[segment];
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
        // A copied parameter node's values are its home segment's to give.
        const bool read_later =
            segment_of_[n] == segment &&
            (is_output_.count(id) != 0 ||
             std::any_of(readers_[id].begin(), readers_[id].end(),
                         [&](int s) { return s != segment; }));
        if (read_later) out.outputs.push_back(local);
        id = local;
      }
      out.nodes.push_back(std::move(node));
    }
    retype(out);
    return out;
  }

 private:
  const Graph& graph_;
  const std::vector<int>& segment_of_;
  std::unordered_map<std::string, ValueId> index_;
  std::vector<int> producers_;
  std::vector<std::set<int>> no_copy_;
  int segment_ = 0;
  std::vector<std::vector<int>> full_;  // per segment: its nodes to copy
  std::vector<std::set<int>> readers_;  // per value: segments reading it
  std::set<ValueId> is_output_;
  std::set<ValueId> graph_inputs_;

  bool is_graph_input(ValueId id) const { return graph_inputs_.count(id); }
};

// `node` alone in a graph whose inputs are its non-constant inputs (the
// constants it reads stay constants): how a device target sees it when its
// host parameters arrive as segment inputs.
Graph node_alone(const Graph& graph, const Node& node) {
  Graph alone;
  alone.name = graph.name;
  Node copy = node;
  std::map<ValueId, ValueId> mapped;
  for (ValueId& id : copy.inputs) {
    if (id == kNoValue) continue;
    auto it = mapped.find(id);
    if (it != mapped.end()) {
      id = it->second;
      continue;
    }
    ValueId local = alone.add_value(graph.value(id));
    if (const Tensor* tensor = graph.constant(id)) {
      alone.constants[local] = *tensor;
    } else {
      alone.inputs.push_back(local);
    }
    mapped[id] = local;
    id = local;
  }
  for (ValueId& id : copy.outputs) {
    if (id == kNoValue) continue;
    id = alone.add_value(graph.value(id));
    alone.outputs.push_back(id);
  }
  alone.nodes.push_back(std::move(copy));
  return alone;
}

// Whether device target `target` takes `node` once the inputs it reads on
// the host (PartitionTarget::host_inputs) that the graph computes from data
// arrive as segment inputs; `parameters` gets those values.
bool takes_with_host_parameters(const Graph& graph, const Node& node,
                                const PartitionTarget& target,
                                const std::vector<int>& producers,
                                std::vector<ValueId>& parameters) {
  if (target.host_memory || !target.host_inputs || node.has_subgraphs()) {
    return false;
  }
  parameters.clear();
  for (size_t index : target.host_inputs(graph, node)) {
    if (index >= node.inputs.size() || node.inputs[index] == kNoValue) {
      continue;
    }
    const ValueId id = node.inputs[index];
    if (producers[id] >= 0) parameters.push_back(id);
  }
  if (parameters.empty()) return false;
  const Graph alone = node_alone(graph, node);
  return target.supports(alone, alone.nodes[0]).is_ok();
}

// Each node on the first target that takes it and has not refused it.
// `host_parameters` gets, per node a device target takes only with host
// parameters, those values.
Status assign(const Graph& graph, const std::vector<PartitionTarget>& targets,
              const std::vector<std::set<int>>& refused_in_segment,
              Partition& partition,
              std::map<int, std::vector<ValueId>>& host_parameters) {
  const std::vector<int> producers = graph.producers();
  for (const PartitionTarget& t : targets) partition.targets.push_back(t.name);
  std::vector<std::string> refused;
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const Node& node = graph.nodes[n];
    int chosen = -1;
    std::string why;
    std::vector<std::string> reasons;
    for (size_t t = 0; t < targets.size() && chosen < 0; ++t) {
      const bool refused_there =
          refused_in_segment[t].count(static_cast<int>(n));
      Status ok = refused_there ? unsupported("refused in its segment")
                                : targets[t].supports(graph, node);
      std::vector<ValueId> parameters;
      if (!ok.is_ok() && !refused_there &&
          takes_with_host_parameters(graph, node, targets[t], producers,
                                     parameters)) {
        host_parameters[static_cast<int>(n)] = std::move(parameters);
        ok = Status::ok();
      }
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
    partition.labels.push_back(node.label());
    partition.why.push_back(chosen == 0 ? std::string() : why);
  }
  if (refused.empty()) return Status::ok();
  return unsupported("no backend of [{}] runs {} node(s) of graph '{}': {}",
                     fmt::join(partition.targets, ", "), refused.size(),
                     graph.name, fmt::join(refused, "; "));
}

// A state pair stays on the device of the segment that writes its next
// value when that segment is the only one reading it: then nothing else
// needs it on the host between runs. A state that another segment reads,
// or that a host segment writes, is the runtime's to carry as a tensor.
void hold_states(const Graph& graph,
                 const std::vector<PartitionTarget>& targets,
                 Partition& partition) {
  auto has = [](const Graph& g, const std::vector<ValueId>& ids,
                const std::string& name) {
    return std::any_of(ids.begin(), ids.end(),
                       [&](ValueId id) { return g.value(id).name == name; });
  };
  for (size_t p = 0; p < graph.state_pairs.size(); ++p) {
    const StatePair& pair = graph.state_pairs[p];
    const std::string& in = graph.value(pair.input).name;
    const std::string& out = graph.value(pair.output).name;
    int writer = -1;
    int readers = 0, reading_writer = 0;
    for (size_t s = 0; s < partition.segments.size(); ++s) {
      const Graph& g = partition.segments[s].graph;
      const bool reads = has(g, g.inputs, in);
      if (has(g, g.outputs, out)) writer = static_cast<int>(s);
      readers += reads || has(g, g.inputs, out);
      reading_writer += reads && has(g, g.outputs, out);
    }
    if (writer < 0 || readers != 1 || reading_writer != 1) continue;
    Segment& segment = partition.segments[writer];
    if (targets[segment.target].host_memory) continue;
    Graph& g = segment.graph;
    StatePair held;
    held.input = g.find_value(in);
    held.output = g.find_value(out);
    held.initial = pair.initial;
    g.state_pairs.push_back(std::move(held));
    segment.held_states.push_back(static_cast<int>(p));
  }
}

// The first host target that takes node `n` and has not refused it, or -1.
int host_target_for(const Graph& graph, int n,
                    const std::vector<PartitionTarget>& targets,
                    const std::vector<std::set<int>>& refused) {
  for (size_t t = 0; t < targets.size(); ++t) {
    if (targets[t].host_memory && !refused[t].count(n) &&
        targets[t].supports(graph, graph.nodes[n]).is_ok()) {
      return static_cast<int>(t);
    }
  }
  return -1;
}

// A host parameter must be made on the host: its producer leaves every
// device target, or, when no host target runs it, the node reading it
// leaves its device (the device would need a read-back in the middle of
// its recording). Returns whether anything moved.
bool place_host_parameter_producers(
    const Graph& graph, const std::vector<PartitionTarget>& targets,
    const Partition& partition,
    const std::map<int, std::vector<ValueId>>& host_parameters,
    std::vector<std::set<int>>& refused, std::map<int, std::string>& reasons) {
  const std::vector<int> producers = graph.producers();
  bool changed = false;
  for (const auto& [n, parameters] : host_parameters) {
    const int t = partition.node_target[n];
    if (targets[t].host_memory) continue;
    for (ValueId id : parameters) {
      const int p = producers[id];
      if (targets[partition.node_target[p]].host_memory) {
        // Not copied into a device segment either (SegmentBuilder).
        for (size_t d = 0; d < targets.size(); ++d) {
          if (!targets[d].host_memory) refused[d].insert(p);
        }
        continue;
      }
      const Node& reader = graph.nodes[n];
      if (host_target_for(graph, p, targets, refused) >= 0) {
        for (size_t d = 0; d < targets.size(); ++d) {
          if (!targets[d].host_memory) refused[d].insert(p);
        }
        reasons[p] = fmt::format(
            "{}: its output '{}' is a parameter that {} on {} reads on the "
            "host",
            graph.nodes[p].label(), graph.value(id).name, reader.label(),
            targets[t].name);
      } else {
        refused[t].insert(n);
        reasons[n] = fmt::format(
            "{}: parameter '{}' is made on the device by {}, which no host "
            "backend runs; {} reads parameters on the host before recording, "
            "and a read-back in the middle of its recording is not done",
            reader.label(), graph.value(id).name, graph.nodes[p].label(),
            targets[t].name);
      }
      changed = true;
      break;
    }
  }
  return changed;
}

// The inputs of each device segment that its target reads on the host.
void name_host_parameters(const std::vector<PartitionTarget>& targets,
                          Segment& segment) {
  const PartitionTarget& target = targets[segment.target];
  if (target.host_memory || !target.host_inputs) return;
  const Graph& g = segment.graph;
  const std::set<ValueId> inputs(g.inputs.begin(), g.inputs.end());
  std::set<std::string> named;
  for (const Node& node : g.nodes) {
    for (size_t index : target.host_inputs(g, node)) {
      if (index < node.inputs.size() && inputs.count(node.inputs[index]) &&
          named.insert(g.value(node.inputs[index]).name).second) {
        segment.host_parameters.push_back(g.value(node.inputs[index]).name);
      }
    }
  }
}

}  // namespace

Result<Partition> partition_graph(const Graph& graph,
                                  const std::vector<PartitionTarget>& targets) {
  if (targets.empty()) {
    return invalid_argument("no backend to run graph '{}' on", graph.name);
  }
  // refused[t]: nodes target t refused in a segment of its own (a value
  // the whole graph computes from shapes may arrive there as data).
  std::vector<std::set<int>> refused(targets.size());
  // Why a node left a target in an earlier round, for the report.
  std::map<int, std::string> reasons;
  for (int round = 0;; ++round) {
    Partition partition;
    std::map<int, std::vector<ValueId>> host_parameters;
    SEQRT_RETURN_IF_ERROR(
        assign(graph, targets, refused, partition, host_parameters));
    for (const auto& [n, why] : reasons) {
      if (partition.node_target[n] != 0) partition.why[n] = why;
    }
    if (round + 1 < kMaxRounds &&
        place_host_parameter_producers(graph, targets, partition,
                                       host_parameters, refused, reasons)) {
      continue;
    }
    const std::vector<bool> control =
        control_nodes(graph, targets, partition.node_target);
    const std::vector<std::vector<int>> groups =
        group_in_order(dependencies(graph), partition.node_target, control);
    size_t placed = 0;
    for (const std::vector<int>& g : groups) placed += g.size();
    if (placed != graph.nodes.size()) {
      return invalid_argument("graph '{}' has a cycle", graph.name);
    }
    std::vector<int> segment_of(graph.nodes.size(), -1);
    std::vector<std::set<int>> no_copy;
    for (size_t s = 0; s < groups.size(); ++s) {
      for (int n : groups[s]) segment_of[n] = static_cast<int>(s);
      no_copy.push_back(refused[partition.node_target[groups[s].front()]]);
    }
    SegmentBuilder builder(graph, segment_of, groups, std::move(no_copy));
    bool changed = false;
    for (size_t s = 0; s < groups.size(); ++s) {
      Segment segment;
      segment.target = partition.node_target[groups[s].front()];
      segment.nodes = groups[s];
      segment.control = groups[s].size() == 1 && control[groups[s].front()];
      segment.graph = builder.build(static_cast<int>(s),
                                    fmt::format("{}_part{}_{}", graph.name, s,
                                                targets[segment.target].name));
      // Asked again where the node now stands.
      const std::vector<int>& copied = builder.full(static_cast<int>(s));
      for (size_t k = 0; k < copied.size(); ++k) {
        Status ok = targets[segment.target].supports(segment.graph,
                                                     segment.graph.nodes[k]);
        if (ok.is_ok()) continue;
        refused[segment.target].insert(copied[k]);
        partition.why[copied[k]] = reasons[copied[k]] = ok.message();
        changed = true;
      }
      name_host_parameters(targets, segment);
      partition.segments.push_back(std::move(segment));
    }
    if (!changed) {
      // Settled: then the cost step, which may settle it anew.
      auto is_parameter = [&](const Node& node) {
        return is_parameter_node(graph, node);
      };
      for (const auto& [n, why] :
           light_islands(graph, targets, partition, is_parameter)) {
        refused[partition.node_target[n]].insert(n);
        reasons[n] = why;
        changed = true;
      }
    }
    if (!changed || round + 1 >= kMaxRounds) {
      hold_states(graph, targets, partition);
      return partition;
    }
  }
}

uint64_t crossing_bytes(const Partition& partition,
                        const std::vector<PartitionTarget>& targets,
                        const std::map<std::string, int64_t>& bindings,
                        std::vector<std::string>* unknown) {
  uint64_t total = 0;
  for (const Segment& segment : partition.segments) {
    if (targets[segment.target].host_memory) continue;
    // Sizes as the planner sees them: the segment typed again at these
    // bindings (an output of past+seq steps included).
    Result<Graph> bound = bind_dims(segment.graph, bindings);
    const Graph& typed = bound.is_ok() ? *bound : segment.graph;
    std::vector<ValueId> crossing = typed.inputs;
    crossing.insert(crossing.end(), typed.outputs.begin(), typed.outputs.end());
    std::set<ValueId> held;
    for (const StatePair& pair : typed.state_pairs) {
      held.insert({pair.input, pair.output});
    }
    for (ValueId id : crossing) {
      if (held.count(id)) continue;  // stays on the device
      const Value& value = typed.value(id);
      Result<std::vector<int64_t>> dims =
          concrete_dims(value, nullptr, bindings);
      if (!dims.is_ok()) {
        if (unknown != nullptr) unknown->push_back(value.name);
        continue;
      }
      uint64_t elements = 1;
      for (int64_t d : *dims) elements *= static_cast<uint64_t>(d);
      total += dtype_bytes(value.dtype, elements);
    }
  }
  return total;
}

}  // namespace seqrt
