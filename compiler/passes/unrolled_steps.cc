#include "compiler/passes/unrolled_steps.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

#include "compiler/passes/rewrite.h"

namespace seqrt {
namespace {

// Fewer steps are not worth a loop, and the matching needs step 1 to sit
// between two others.
constexpr int64_t kMinSteps = 3;

// An initializer's or a Constant node's value; nullptr for anything else.
const Tensor* constant_value(const Graph& graph,
                             const std::vector<int>& producers, ValueId id) {
  if (const Tensor* tensor = graph.constant(id)) return tensor;
  if (producers[id] < 0) return nullptr;
  const Node& node = graph.nodes[producers[id]];
  const Attribute* value = node.attr("value");
  if (node.op == "Constant" && node.domain.empty() && value != nullptr &&
      value->type() == AttrType::kTensor) {
    return &value->as_tensor();
  }
  return nullptr;
}

// Exporters write each copy's small constants (axes, indices) anew.
bool same_constant(const Graph& graph, const std::vector<int>& producers,
                   ValueId a, ValueId b) {
  const Tensor* x = constant_value(graph, producers, a);
  const Tensor* y = constant_value(graph, producers, b);
  return x != nullptr && y != nullptr && x->dtype() == y->dtype() &&
         x->dims() == y->dims() &&
         std::memcmp(x->data(), y->data(), x->byte_size()) == 0;
}

// A rank-0 integer constant.
std::optional<int64_t> scalar_constant(const Graph& graph,
                                       const std::vector<int>& producers,
                                       ValueId id) {
  const Tensor* tensor = constant_value(graph, producers, id);
  if (tensor == nullptr || !is_integer(tensor->dtype()) ||
      !tensor->dims().empty()) {
    return std::nullopt;
  }
  return tensor->element_i64(0);
}

// A Gather of one element of `source` along `axis`: its source, normalised
// axis and index, when the index is a scalar constant.
struct StepGather {
  SlicedSource at;
  int64_t index = 0;
};

std::optional<StepGather> step_gather(const Graph& graph,
                                      const std::vector<int>& producers,
                                      const Node& node) {
  if (node.op != "Gather" || !node.domain.empty() || node.inputs.size() != 2 ||
      node.outputs.size() != 1) {
    return std::nullopt;
  }
  const std::optional<Shape>& shape = graph.value(node.inputs[0]).shape;
  std::optional<int64_t> index =
      scalar_constant(graph, producers, node.inputs[1]);
  if (!shape || shape->rank() == 0 || !index || *index < 0) return std::nullopt;
  const Attribute* attr = node.attr("axis");
  int64_t axis = attr != nullptr ? attr->as_int() : 0;
  const int64_t rank = static_cast<int64_t>(shape->rank());
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return std::nullopt;
  return StepGather{{node.inputs[0], axis}, *index};
}

bool same_node_kind(const Node& a, const Node& b) {
  if (a.op != b.op || a.domain != b.domain ||
      a.inputs.size() != b.inputs.size() ||
      a.outputs.size() != b.outputs.size() ||
      a.attrs.size() != b.attrs.size()) {
    return false;
  }
  for (const auto& [name, attr] : a.attrs) {
    const Attribute* other = b.attr(name);
    if (other == nullptr || !attr.equals(*other)) return false;
  }
  return true;
}

class LoopFinder {
 public:
  LoopFinder(const Graph& graph, int64_t steps, std::vector<SlicedSource> srcs,
             std::vector<std::vector<int>> seeds)
      : graph_(graph),
        producers_(graph.producers()),
        uses_(compute_uses(graph)) {
    loop_.steps = steps;
    loop_.sources = std::move(srcs);
    loop_.seeds = std::move(seeds);
  }

  std::optional<UnrolledLoop> find();
  // Per source: the latest step of this loop its value depends on (-1:
  // computed before the loop).
  std::vector<int64_t> source_labels() {
    compute_labels();
    std::vector<int64_t> labels;
    for (const SlicedSource& s : loop_.sources) {
      labels.push_back(value_label_[s.source]);
    }
    return labels;
  }

 private:
  enum class Kind { kNone, kStep, kCarry, kOutside };
  using ValueMap = std::unordered_map<ValueId, ValueId>;

  void compute_labels();
  Kind kind_of(ValueId id) const;
  bool instantiate(int64_t t, bool discover);
  bool match_node(int64_t t, const Node& tn, const Node& candidate,
                  bool discover, std::vector<ValueId>& found) const;
  bool check_exports();

  const Graph& graph_;
  std::vector<int> producers_;
  ValueUses uses_;
  UnrolledLoop loop_;
  std::vector<int64_t> node_label_;  // the latest step a node depends on
  std::vector<int64_t> value_label_;
  std::vector<ValueMap> at_;  // per step: template value -> value
  std::set<ValueId> template_values_;
  std::map<ValueId, size_t> carry_slot_;  // template read -> carries index
  std::vector<std::set<int>> instance_;   // per step: its nodes
  std::set<int> used_;
};

void LoopFinder::compute_labels() {
  std::map<int, int64_t> seed_step;
  for (const std::vector<int>& per_step : loop_.seeds) {
    for (size_t t = 0; t < per_step.size(); ++t) seed_step[per_step[t]] = t;
  }
  node_label_.assign(graph_.nodes.size(), -1);
  value_label_.assign(graph_.values.size(), -1);
  Result<std::vector<int>> order = graph_.topological_order();
  if (!order.is_ok()) return;
  for (int n : *order) {
    const Node& node = graph_.nodes[n];
    int64_t label = -1;
    auto seed = seed_step.find(n);
    if (seed != seed_step.end()) label = seed->second;
    for (ValueId id : node.inputs) {
      if (id != kNoValue) label = std::max(label, value_label_[id]);
    }
    node_label_[n] = label;
    for (ValueId id : node.outputs) {
      if (id != kNoValue) value_label_[id] = label;
    }
  }
}

LoopFinder::Kind LoopFinder::kind_of(ValueId id) const {
  if (id == kNoValue) return Kind::kNone;
  if (template_values_.count(id)) return Kind::kStep;
  return value_label_[id] == 0 ? Kind::kCarry : Kind::kOutside;
}

// Whether `candidate` (of step t) is template node `tn` there; `found`
// collects, when discovering, the values it reads at carry positions.
bool LoopFinder::match_node(int64_t t, const Node& tn, const Node& candidate,
                            bool discover, std::vector<ValueId>& found) const {
  if (!same_node_kind(tn, candidate)) return false;
  found.assign(loop_.carries.size(), kNoValue);
  for (size_t i = 0; i < tn.inputs.size(); ++i) {
    const ValueId want = tn.inputs[i], got = candidate.inputs[i];
    switch (kind_of(want)) {
      case Kind::kNone:
        if (got != want) return false;
        break;
      case Kind::kOutside:
        if (got != want && (got == kNoValue || value_label_[got] != -1 ||
                            !same_constant(graph_, producers_, got, want))) {
          return false;
        }
        break;
      case Kind::kStep: {
        auto it = at_[t].find(want);
        if (it == at_[t].end() || it->second != got) return false;
        break;
      }
      case Kind::kCarry: {
        const Carry& carry = loop_.carries[carry_slot_.at(want)];
        if (!discover) {
          if (got != at_[t - 1].at(carry.carried)) return false;
          break;
        }
        // Step 0 reads initial values from before the loop; step 2 reads
        // values of step 1, which are the template's.
        const bool fits =
            got != kNoValue && (t == 0 ? value_label_[got] == -1
                                       : template_values_.count(got) != 0);
        ValueId& slot = found[carry_slot_.at(want)];
        if (!fits || (slot != kNoValue && slot != got)) return false;
        slot = got;
        break;
      }
    }
  }
  return true;
}

// Maps every template node to its copy in step t. Discovering (steps 2
// and 0), the carries' other ends are read off the copies.
bool LoopFinder::instantiate(int64_t t, bool discover) {
  ValueMap& at = at_[t];
  for (size_t s = 0; s < loop_.sources.size(); ++s) {
    const Node& tn = graph_.nodes[loop_.seeds[s][1]];
    const Node& copy = graph_.nodes[loop_.seeds[s][t]];
    at[tn.outputs[0]] = copy.outputs[0];
    instance_[t].insert(loop_.seeds[s][t]);
  }
  std::vector<ValueId> discovered(loop_.carries.size(), kNoValue);
  for (int n : loop_.step_nodes) {
    const Node& tn = graph_.nodes[n];
    // Candidates: readers of a value already mapped for this step.
    ValueId anchor = kNoValue;
    for (ValueId in : tn.inputs) {
      if (kind_of(in) == Kind::kStep) {
        anchor = at.at(in);
        break;
      }
      if (kind_of(in) == Kind::kCarry && !discover) {
        anchor = at_[t - 1].at(loop_.carries[carry_slot_.at(in)].carried);
        break;
      }
    }
    if (anchor == kNoValue) return false;
    bool matched = false;
    for (int m : uses_.consumers[anchor]) {
      if (used_.count(m) || node_label_[m] != t) continue;
      std::vector<ValueId> found;
      if (!match_node(t, tn, graph_.nodes[m], discover, found)) continue;
      bool consistent = true;
      for (size_t s = 0; s < found.size(); ++s) {
        if (found[s] == kNoValue) continue;
        if (discovered[s] != kNoValue && discovered[s] != found[s]) {
          consistent = false;
        }
      }
      if (!consistent) continue;
      for (size_t s = 0; s < found.size(); ++s) {
        if (found[s] != kNoValue) discovered[s] = found[s];
      }
      for (size_t j = 0; j < tn.outputs.size(); ++j) {
        if (tn.outputs[j] != kNoValue)
          at[tn.outputs[j]] = graph_.nodes[m].outputs[j];
      }
      used_.insert(m);
      instance_[t].insert(m);
      matched = true;
      break;
    }
    if (!matched) return false;
  }
  if (!discover) return true;
  for (size_t s = 0; s < discovered.size(); ++s) {
    if (discovered[s] == kNoValue) return false;
    if (t == 0) {
      loop_.carries[s].initial = discovered[s];
    } else {
      loop_.carries[s].carried = discovered[s];
    }
  }
  return true;
}

// Values leave the copies only as carries into the next copy, as the last
// copy's carried values, and stacked by one Concat in step order.
bool LoopFinder::check_exports() {
  const int64_t last = loop_.steps - 1;
  std::set<ValueId> carried;
  for (const Carry& c : loop_.carries) carried.insert(c.carried);
  std::map<int, StackedOutput> stacks;  // by Concat node
  loop_.finals.assign(loop_.carries.size(), kNoValue);
  for (ValueId v : template_values_) {
    for (int64_t t = 0; t <= last; ++t) {
      const ValueId id = at_[t].at(v);
      const bool next_reads = t < last && carried.count(v);
      bool outside = uses_.is_output[id];
      for (int m : uses_.consumers[id]) {
        if (instance_[t].count(m) ||
            (next_reads && instance_[t + 1].count(m))) {
          continue;
        }
        const Node& reader = graph_.nodes[m];
        if (reader.op == "Concat" && reader.domain.empty() &&
            reader.inputs.size() == static_cast<size_t>(loop_.steps) &&
            reader.inputs[t] == id) {
          StackedOutput& stack = stacks[m];
          if (stack.concat >= 0 && stack.value != v) return false;
          stack.value = v;
          stack.concat = m;
          continue;
        }
        outside = true;
      }
      if (!outside) continue;
      if (t != last || !carried.count(v)) return false;
      for (size_t s = 0; s < loop_.carries.size(); ++s) {
        if (loop_.carries[s].carried == v) loop_.finals[s] = id;
      }
    }
  }
  for (auto& [m, stack] : stacks) {
    const Node& concat = graph_.nodes[m];
    const std::optional<Shape>& shape = graph_.value(concat.inputs[0]).shape;
    const Attribute* attr = concat.attr("axis");
    if (!shape || attr == nullptr) return false;
    int64_t axis = attr->as_int();
    if (axis < 0) axis += static_cast<int64_t>(shape->rank());
    if (axis < 0 || axis >= static_cast<int64_t>(shape->rank()) ||
        (*shape)[axis] != Dim(1)) {
      return false;
    }
    for (int64_t t = 0; t <= last; ++t) {
      if (concat.inputs[t] != at_[t].at(stack.value)) return false;
    }
    stack.axis = axis;
    stack.stacked = concat.outputs[0];
    loop_.stacked.push_back(stack);
    loop_.all_nodes.push_back(m);
  }
  return !loop_.stacked.empty();
}

std::optional<UnrolledLoop> LoopFinder::find() {
  compute_labels();
  const int64_t steps = loop_.steps;
  for (const SlicedSource& s : loop_.sources) {
    if (value_label_[s.source] != -1) return std::nullopt;
  }
  // The template: step 1's nodes. Steps before the last hold nothing else.
  std::vector<size_t> per_step(steps, 0);
  Result<std::vector<int>> order = graph_.topological_order();
  if (!order.is_ok()) return std::nullopt;
  std::set<int> seeds;
  for (const std::vector<int>& s : loop_.seeds)
    seeds.insert(s.begin(), s.end());
  for (int n : *order) {
    const int64_t label = node_label_[n];
    if (label >= 0) ++per_step[label];
    if (label != 1) continue;
    for (ValueId id : graph_.nodes[n].outputs) {
      if (id != kNoValue) template_values_.insert(id);
    }
    if (!seeds.count(n)) loop_.step_nodes.push_back(n);
  }
  // The values of step 0 that step 1 reads: the carries.
  for (int n : loop_.step_nodes) {
    for (ValueId in : graph_.nodes[n].inputs) {
      if (kind_of(in) == Kind::kCarry && !carry_slot_.count(in)) {
        carry_slot_[in] = loop_.carries.size();
        loop_.carries.push_back(Carry{in, kNoValue, kNoValue});
      }
    }
  }
  if (loop_.carries.empty()) return std::nullopt;
  at_.assign(steps, {});
  instance_.assign(steps, {});
  for (ValueId v : template_values_) at_[1][v] = v;
  for (int n : loop_.step_nodes) used_.insert(n);
  instance_[1].insert(loop_.step_nodes.begin(), loop_.step_nodes.end());
  for (size_t s = 0; s < loop_.sources.size(); ++s) {
    instance_[1].insert(loop_.seeds[s][1]);
  }
  if (!instantiate(2, true)) return std::nullopt;
  for (int64_t t = 3; t < steps; ++t) {
    if (!instantiate(t, false)) return std::nullopt;
  }
  if (!instantiate(0, true)) return std::nullopt;
  for (const Carry& c : loop_.carries) {
    if (at_[0].at(c.carried) != c.read) return std::nullopt;
  }
  for (int64_t t = 0; t + 1 < steps; ++t) {
    if (per_step[t] != instance_[t].size()) return std::nullopt;
  }
  if (!check_exports()) return std::nullopt;
  for (const std::set<int>& nodes : instance_) {
    loop_.all_nodes.insert(loop_.all_nodes.end(), nodes.begin(), nodes.end());
  }
  return loop_;
}

}  // namespace

std::optional<UnrolledLoop> find_unrolled_loop(const Graph& graph) {
  const std::vector<int> producers = graph.producers();
  // Gathers of one element, by what they slice: index -> node.
  std::map<std::pair<ValueId, int64_t>, std::map<int64_t, int>> slices;
  std::set<std::pair<ValueId, int64_t>> repeated;
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    std::optional<StepGather> g = step_gather(graph, producers, graph.nodes[n]);
    if (!g) continue;
    auto key = std::make_pair(g->at.source, g->at.axis);
    if (!slices[key].emplace(g->index, static_cast<int>(n)).second) {
      repeated.insert(key);
    }
  }
  // Sources sliced at every index 0..T-1 exactly once, grouped by T.
  std::map<int64_t, std::vector<std::pair<ValueId, int64_t>>> by_steps;
  for (const auto& [key, indices] : slices) {
    const int64_t steps = static_cast<int64_t>(indices.size());
    if (steps < kMinSteps || repeated.count(key) ||
        indices.rbegin()->first != steps - 1) {
      continue;
    }
    by_steps[steps].push_back(key);
  }
  // The longest loops first; a loop nested in the values of another one
  // (a second layer) is found once the first is folded.
  for (auto it = by_steps.rbegin(); it != by_steps.rend(); ++it) {
    std::vector<SlicedSource> sources;
    std::vector<std::vector<int>> seeds;
    for (const auto& key : it->second) {
      sources.push_back(SlicedSource{key.first, key.second});
      std::vector<int> per_step;
      for (const auto& [index, node] : slices[key]) per_step.push_back(node);
      seeds.push_back(std::move(per_step));
    }
    // Sources computed from an earlier copy of the same length belong to a
    // later loop: drop them and look again.
    for (;;) {
      LoopFinder probe(graph, it->first, sources, seeds);
      std::optional<UnrolledLoop> loop = probe.find();
      if (loop) return loop;
      // Retry without the sources whose own label is a step of this loop.
      std::vector<SlicedSource> kept_sources;
      std::vector<std::vector<int>> kept_seeds;
      {
        LoopFinder labels(graph, it->first, sources, seeds);
        std::vector<int64_t> label = labels.source_labels();
        for (size_t s = 0; s < sources.size(); ++s) {
          if (label[s] == -1) {
            kept_sources.push_back(sources[s]);
            kept_seeds.push_back(seeds[s]);
          }
        }
      }
      if (kept_sources.size() == sources.size() || kept_sources.empty()) break;
      sources = std::move(kept_sources);
      seeds = std::move(kept_seeds);
    }
  }
  return std::nullopt;
}

}  // namespace seqrt
