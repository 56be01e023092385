// Connected f32 elementwise nodes -> one seqrt::FusedElementwise node whose
// body holds them, so a backend runs the chain in one pass over memory
// (SiLU x·σ(x), the SwiGLU gate x·σ(x)·g, bias-activation-scale chains).
//
// A node joins its readers' group when every reader is a fusable node of
// the same output shape; so inside a group each value is read only there
// and is no graph output. A group is fused when it has two or more nodes and
// one output, and its inputs broadcast to exactly that output's shape. Its
// one-element constants become body constants; other inputs become node
// inputs, seen by the body broadcast to the output shape.
#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "compiler/infer/infer_graph.h"
#include "compiler/passes/passes.h"
#include "compiler/passes/rewrite.h"

namespace seqrt {
namespace {

const std::set<std::string> kUnaryOps = {
    "Sqrt", "Exp",  "Log",     "Neg",  "Abs",      "Reciprocal",
    "Erf",  "Tanh", "Sigmoid", "Relu", "Softplus", "Gelu"};
const std::set<std::string> kBinaryOps = {"Add", "Sub", "Mul", "Div",
                                          "Pow", "Max", "Min"};

bool is_typed_f32(const Graph& graph, ValueId id) {
  return id != kNoValue && graph.value(id).dtype == DType::kF32 &&
         graph.value(id).shape.has_value();
}

// A node a group may hold: a fusable ONNX op on f32 values of known rank,
// without attributes other than Gelu's approximate.
bool is_candidate(const Graph& graph, const Node& node) {
  if (node.domain != kOnnxDomain) return false;
  size_t arity = kUnaryOps.count(node.op) != 0    ? 1
                 : kBinaryOps.count(node.op) != 0 ? 2
                                                  : 0;
  if (arity == 0 || node.inputs.size() != arity || node.outputs.size() != 1) {
    return false;
  }
  for (const auto& [name, attr] : node.attrs) {
    if (node.op != "Gelu" || name != "approximate" ||
        attr.type() != AttrType::kString) {
      return false;
    }
  }
  return std::all_of(node.inputs.begin(), node.inputs.end(),
                     [&](ValueId id) { return is_typed_f32(graph, id); }) &&
         is_typed_f32(graph, node.outputs[0]);
}

class DisjointSets {
 public:
  explicit DisjointSets(size_t n) : parent_(n) {
    std::iota(parent_.begin(), parent_.end(), 0);
  }
  int find(int x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }
  void unite(int a, int b) { parent_[find(a)] = find(b); }

 private:
  std::vector<int> parent_;
};

// The numpy broadcast of two shapes; nullopt where it is not certain (a
// symbol against another symbol or an unknown dim).
std::optional<Shape> broadcast(const Shape& a, const Shape& b) {
  size_t rank = std::max(a.rank(), b.rank());
  std::vector<Dim> dims(rank);
  for (size_t i = 0; i < rank; ++i) {
    Dim da = i + a.rank() < rank ? Dim(1) : a[i + a.rank() - rank];
    Dim db = i + b.rank() < rank ? Dim(1) : b[i + b.rank() - rank];
    if (da == db || (db.is_fixed() && db.value() == 1)) {
      dims[i] = da;
    } else if (da.is_fixed() && da.value() == 1) {
      dims[i] = db;
    } else {
      return std::nullopt;
    }
  }
  return Shape(std::move(dims));
}

// One group of candidate nodes, in dependency order.
struct Group {
  std::vector<int> nodes;
  int exit = -1;  // the node whose output leaves the group
  int exits = 0;  // fused only when 1
};

// Groups by the rule at the top of this file; `internal` marks values read
// only inside their group.
std::vector<Group> find_groups(const Graph& graph, const ValueUses& uses,
                               const std::vector<int>& order,
                               std::vector<bool>& internal) {
  const size_t n = graph.nodes.size();
  std::vector<bool> candidate(n);
  for (size_t i = 0; i < n; ++i)
    candidate[i] = is_candidate(graph, graph.nodes[i]);
  DisjointSets sets(n);
  internal.assign(graph.values.size(), false);
  for (size_t p = 0; p < n; ++p) {
    if (!candidate[p]) continue;
    ValueId v = graph.nodes[p].outputs[0];
    const std::vector<int>& readers = uses.consumers[v];
    bool joins = !uses.is_output[v] && !readers.empty();
    for (int r : readers) {
      joins =
          joins && candidate[r] &&
          graph.value(graph.nodes[r].outputs[0]).shape == graph.value(v).shape;
    }
    if (!joins) continue;
    internal[v] = true;
    for (int r : readers) sets.unite(static_cast<int>(p), r);
  }
  std::map<int, Group> by_root;
  for (int node : order) {
    if (!candidate[node]) continue;
    Group& group = by_root[sets.find(node)];
    group.nodes.push_back(node);
    if (internal[graph.nodes[node].outputs[0]]) continue;
    group.exit = node;
    ++group.exits;
  }
  std::vector<Group> groups;
  for (auto& [root, group] : by_root) {
    if (group.nodes.size() >= 2 && group.exits == 1) groups.push_back(group);
  }
  return groups;
}

// The body of `group` and the node inputs it takes, or nothing when the
// group's inputs do not broadcast to exactly its output's shape.
struct Body {
  std::shared_ptr<Graph> graph;
  std::vector<ValueId> inputs;
};

std::optional<Body> build_body(const Graph& graph, const Group& group,
                               const std::vector<bool>& internal) {
  const Node& exit = graph.nodes[group.exit];
  const Shape& out_shape = *graph.value(exit.outputs[0]).shape;
  Body body;
  body.graph = std::make_shared<Graph>();
  Graph& g = *body.graph;
  g.name = "fused_" + graph.value(exit.outputs[0]).name;
  std::map<ValueId, ValueId> to_body;
  std::optional<Shape> broadcast_shape = Shape();
  for (int n : group.nodes) {
    for (ValueId id : graph.nodes[n].inputs) {
      if (internal[id] || to_body.count(id) != 0) continue;
      const Value& value = graph.value(id);
      const Tensor* constant = graph.constant(id);
      if (constant != nullptr && constant->num_elements() == 1 &&
          constant->rank() <= out_shape.rank()) {
        // Broadcast cannot widen by it, so a rank-0 scalar is the same.
        to_body[id] = g.add_value(Value{value.name, DType::kF32, Shape()});
        g.constants[to_body[id]] =
            Tensor::scalar(static_cast<float>(constant->element_f64(0)));
        continue;
      }
      to_body[id] = g.add_value(Value{value.name, DType::kF32, out_shape});
      g.inputs.push_back(to_body[id]);
      body.inputs.push_back(id);
      if (broadcast_shape) {
        broadcast_shape = broadcast(*broadcast_shape, *value.shape);
      }
    }
  }
  if (body.inputs.empty() || broadcast_shape != out_shape) return std::nullopt;
  for (int n : group.nodes) {
    Node node = graph.nodes[n];
    for (ValueId& id : node.inputs) id = to_body.at(id);
    ValueId out = node.outputs[0];
    to_body[out] =
        g.add_value(Value{graph.value(out).name, DType::kF32, out_shape});
    node.outputs = {to_body[out]};
    g.nodes.push_back(std::move(node));
  }
  g.outputs = {to_body.at(exit.outputs[0])};
  return body;
}

Result<bool> fuse_groups(Graph& graph);

// Fuses inside subgraphs too (RungeKutta bodies, If branches), but never
// inside a fused body, which is one group already.
Result<bool> fuse_in_subgraphs(Graph& graph) {
  bool changed = false;
  for (Node& node : graph.nodes) {
    if (node.domain == kSeqrtDomain && node.op == "FusedElementwise") continue;
    for (auto& [name, attr] : node.attrs) {
      if (attr.type() != AttrType::kGraph) continue;
      Graph copy = *attr.as_graph();
      SEQRT_ASSIGN_OR_RETURN(bool sub_changed, fuse_groups(copy));
      if (!sub_changed) continue;
      attr = Attribute(std::make_shared<Graph>(std::move(copy)));
      changed = true;
    }
  }
  return changed;
}

Result<bool> fuse_groups(Graph& graph) {
  SEQRT_ASSIGN_OR_RETURN(std::vector<int> order, graph.topological_order());
  std::vector<bool> internal;
  std::vector<Group> groups =
      find_groups(graph, compute_uses(graph), order, internal);
  std::set<int> removed;
  std::vector<Node> added;
  for (const Group& group : groups) {
    std::optional<Body> body = build_body(graph, group, internal);
    if (!body) continue;
    Status typed = infer_graph(*body->graph);
    if (!typed.is_ok()) {
      return internal_error("fused body of {} does not type-check: {}",
                            graph.nodes[group.exit].label(), typed.message());
    }
    Node fused;
    fused.name = graph.nodes[group.exit].name;
    fused.op = "FusedElementwise";
    fused.domain = kSeqrtDomain;
    fused.inputs = body->inputs;
    fused.outputs = graph.nodes[group.exit].outputs;
    fused.attrs["body"] = Attribute(body->graph);
    added.push_back(std::move(fused));
    removed.insert(group.nodes.begin(), group.nodes.end());
  }
  for (Node& node : added) add_node(graph, std::move(node));
  if (!removed.empty()) SEQRT_RETURN_IF_ERROR(remove_nodes(graph, removed));
  SEQRT_ASSIGN_OR_RETURN(bool sub_changed, fuse_in_subgraphs(graph));
  return !removed.empty() || sub_changed;
}

}  // namespace

Pass fuse_elementwise_pass() { return {"fuse_elementwise", fuse_groups}; }

}  // namespace seqrt
