// Pattern matching for the fusions: strict readers of producers, constant
// scalars and axes. Each returns nothing when the graph differs in any way
// the rewrite relies on, so a fusion only fires on the exact pattern.
#pragma once

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "compiler/passes/rewrite.h"

namespace seqrt {

class Matcher {
 public:
  explicit Matcher(const Graph& graph)
      : graph_(graph), uses_(compute_uses(graph)) {}

  const Graph& graph() const { return graph_; }
  const ValueUses& uses() const { return uses_; }

  // Index of the ONNX-domain node with op `op` producing `id`, or -1.
  int producer(ValueId id, const std::string& op) const;
  const Node& node(int index) const { return graph_.nodes[index]; }

  // The value of a one-element floating or integer constant.
  std::optional<double> scalar(ValueId id) const;
  // The elements of an integer constant (axes, shapes).
  std::optional<std::vector<int64_t>> ints(ValueId id) const;
  // The shape, when the rank is known.
  const Shape* shape(ValueId id) const;
  DType dtype(ValueId id) const { return graph_.value(id).dtype; }

  // For a binary node with one operand a scalar constant that broadcasting
  // cannot widen (its rank is at most the other's): the other operand and
  // the scalar. `scalar_first` asks for the scalar on the left (Sub, Div).
  std::optional<std::pair<ValueId, double>> with_scalar(
      const Node& node, bool scalar_first = false) const;

  // Whether every value the nodes produce, other than those in `kept`, is
  // read only by these nodes and is no graph output, so the nodes can go.
  bool is_private(const std::set<int>& nodes,
                  const std::set<ValueId>& kept) const;

 private:
  const Graph& graph_;
  ValueUses uses_;
};

// Normalises `axis` against `rank`; nullopt when out of range.
std::optional<int64_t> normalize_axis(int64_t axis, size_t rank);

// True when `node` has exactly these attribute names (others differ from the
// pattern's semantics).
bool has_only_attrs(const Node& node, const std::set<std::string>& names);

// An int attribute or `fallback` when absent.
int64_t int_attr(const Node& node, const std::string& name, int64_t fallback);

// True when `value` is close to `expected` (relative 1e-6, for constants
// exported as float32).
bool near(double value, double expected);

// For a ReduceMean with keepdims over the axes [a, rank) of its input (a
// constant axes input), the first axis a.
std::optional<int64_t> trailing_mean_axis(const Matcher& m, const Node& node);

// For `op`(x, g) or `op`(g, x) (a commuting binary op: Mul, Add), g; nullopt
// unless the result has exactly x's shape and dtype, so g never widens it.
std::optional<ValueId> broadcast_operand(const Matcher& m, const Node& node,
                                         const std::string& op, ValueId x);

// The one node reading `id`, or -1 when it has other readers or is a graph
// output.
int sole_consumer(const Matcher& m, ValueId id);

// A size read at run time from a value's shape: axis `axis` of `value`.
struct ShapeDim {
  ValueId value = kNoValue;
  int64_t axis = 0;  // normalised against the value's rank
};

// For a scalar integer computed as Gather(Shape(x), a) or
// Squeeze(Slice(Shape(x), [a], [a + 1])) (torch's x.size(a)), through Casts
// between integer types: x and a. nullopt for anything else.
std::optional<ShapeDim> shape_dim(const Matcher& m, ValueId id);

// The value of a one-element value that needs no data: a constant, a fixed
// dim read by shape_dim, ConstantOfShape of a one-element constant shape,
// and Cast, Add, Sub, Mul, Div, Pow and Sqrt of such values (how
// torch.full([], v.size(-1) ** 0.5) exports a scale). nullopt otherwise.
std::optional<double> computed_scalar(const Matcher& m, ValueId id);

// One rewrite found by a fusion: the nodes it replaces and those it adds.
// `create_values`, when set, makes the new intermediate values the added
// nodes need (they cannot exist while matching on a const graph).
struct Fusion {
  std::set<int> remove;
  std::vector<Node> add;
  std::function<void(Graph&, std::vector<Node>&)> create_values;
};
using FusionMatcher =
    std::function<std::optional<Fusion>(const Matcher& m, int node)>;

// Applies `match` at every node, in the graph and its subgraphs, until it
// finds nothing more; returns whether anything was fused.
Result<bool> apply_fusions(Graph& graph, const FusionMatcher& match);

}  // namespace seqrt
