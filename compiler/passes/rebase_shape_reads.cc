// Shape(x) of a computed x whose dims inference knows in terms of the graph
// inputs' dims (fixed, an input's symbol, or a polynomial of them such as
// past+seq; not all fixed) is rewritten to read those dims from the graph
// inputs instead:
//   Shape(x) -> Concat(Unsqueeze(dim expression over Gather(Shape(input))))
// Exports read shapes of intermediate tensors to size masks and reshapes
// (Llama's mask is sliced to Shape(repeated K)[2]); such a read pins x in
// the graph and keeps a fusion from replacing the nodes that make it. The
// new arithmetic reads no data, so a run computes it once per binding
// (compiler/planner kPrecomputed) like the read it replaces.
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "compiler/passes/passes.h"
#include "compiler/passes/rewrite.h"
#include "graph/dim_expr.h"

namespace seqrt {
namespace {

// Where each input symbol can be read: the first graph input with it, and
// the axis.
using AtomSources = std::map<std::string, std::pair<ValueId, int64_t>>;

AtomSources atom_sources(const Graph& graph) {
  AtomSources sources;
  for (ValueId id : graph.inputs) {
    const Value& value = graph.value(id);
    if (!value.shape) continue;
    for (size_t axis = 0; axis < value.shape->rank(); ++axis) {
      const Dim& dim = (*value.shape)[axis];
      if (dim.is_symbol() && !is_derived_dim(dim)) {
        sources.emplace(dim.symbol_name(),
                        std::make_pair(id, static_cast<int64_t>(axis)));
      }
    }
  }
  return sources;
}

// The dims Shape(x) reads (its start/end attributes applied), when each is
// fixed or an expression over atoms that some graph input carries.
std::optional<std::vector<DimExpr>> readable_dims(const Graph& graph,
                                                  const Node& shape_node,
                                                  const AtomSources& sources) {
  const Value& x = graph.value(shape_node.inputs[0]);
  if (!x.shape) return std::nullopt;
  const int64_t rank = static_cast<int64_t>(x.shape->rank());
  auto bound = [&](const char* name, int64_t fallback) {
    const Attribute* attr = shape_node.attr(name);
    int64_t at = attr == nullptr ? fallback : attr->as_int();
    if (at < 0) at += rank;
    return std::min(std::max<int64_t>(at, 0), rank);
  };
  const int64_t start = bound("start", 0);
  const int64_t end = std::max(start, bound("end", rank));
  std::vector<DimExpr> dims;
  bool symbolic = false;
  for (int64_t axis = start; axis < end; ++axis) {
    const Dim& dim = (*x.shape)[axis];
    DimExpr expr = DimExpr::from_dim(dim);
    if (expr.is_unknown()) return std::nullopt;
    for (const std::string& atom : expr.atoms()) {
      if (sources.count(atom) == 0) return std::nullopt;
    }
    symbolic = symbolic || dim.is_symbol();
    dims.push_back(std::move(expr));
  }
  // All fixed: constant folding takes it.
  if (!symbolic) return std::nullopt;
  return dims;
}

// Builds the int64 arithmetic of one rewrite, sharing the reads of each
// input's shape and of each atom.
class DimBuilder {
 public:
  DimBuilder(Graph& graph, const AtomSources& sources, std::string base)
      : graph_(graph), sources_(sources), base_(std::move(base)) {}

  // A rank-1, one-element int64 value holding `dim`.
  ValueId dim_value(const DimExpr& dim) {
    ValueId sum = kNoValue;
    for (const auto& [atoms, coefficient] : dim.terms()) {
      ValueId term = atoms.empty() ? constant(coefficient) : kNoValue;
      for (const std::string& atom : atoms) {
        const ValueId factor = atom_value(atom);
        term = term == kNoValue ? factor : binary("Mul", term, factor);
      }
      if (!atoms.empty() && coefficient != 1) {
        term = binary("Mul", term, constant(coefficient));
      }
      sum = sum == kNoValue ? term : binary("Add", sum, term);
    }
    return sum == kNoValue ? constant(0) : sum;
  }

  std::vector<Node>& nodes() { return nodes_; }

 private:
  ValueId fresh(const std::string& what) {
    ValueId id = add_fresh_value(graph_, base_ + "/" + what);
    graph_.value(id).dtype = DType::kI64;
    graph_.value(id).shape = Shape{1};
    return id;
  }

  ValueId constant(int64_t value) {
    ValueId id = fresh("dim_constant");
    graph_.constants[id] = Tensor::from_vector<int64_t>({1}, {value});
    return id;
  }

  ValueId add(std::string op, std::vector<ValueId> inputs, AttrMap attrs,
              const std::string& what) {
    ValueId out = fresh(what);
    Node node;
    node.name = graph_.value(out).name;
    node.op = std::move(op);
    node.domain = kOnnxDomain;
    node.inputs = std::move(inputs);
    node.outputs = {out};
    node.attrs = std::move(attrs);
    nodes_.push_back(std::move(node));
    return out;
  }

  ValueId binary(const char* op, ValueId a, ValueId b) {
    return add(op, {a, b}, {}, op);
  }

  ValueId atom_value(const std::string& atom) {
    auto found = atoms_.find(atom);
    if (found != atoms_.end()) return found->second;
    const auto& [input, axis] = sources_.at(atom);
    ValueId dims =
        add("Shape", {input},
            {{"start", Attribute(axis)}, {"end", Attribute(axis + 1)}},
            "read_" + atom);
    return atoms_[atom] = dims;
  }

  Graph& graph_;
  const AtomSources& sources_;
  std::string base_;
  std::map<std::string, ValueId> atoms_;
  std::vector<Node> nodes_;
};

Result<bool> rebase_graph(Graph& graph) {
  const AtomSources sources = atom_sources(graph);
  if (sources.empty()) return false;
  std::set<ValueId> inputs(graph.inputs.begin(), graph.inputs.end());
  std::set<int> replaced;
  std::vector<Node> added;
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const Node& node = graph.nodes[n];
    if (node.op != "Shape" || !node.domain.empty() || node.inputs.empty()) {
      continue;
    }
    const ValueId x = node.inputs[0];
    if (inputs.count(x) != 0 || graph.is_constant(x)) continue;
    std::optional<std::vector<DimExpr>> dims =
        readable_dims(graph, node, sources);
    if (!dims) continue;
    const ValueId out = node.outputs[0];
    DimBuilder builder(graph, sources, graph.value(out).name);
    std::vector<ValueId> parts;
    for (const DimExpr& dim : *dims) parts.push_back(builder.dim_value(dim));
    Node concat;
    concat.name = node.name;
    concat.op = "Concat";
    concat.domain = kOnnxDomain;
    concat.inputs = std::move(parts);
    concat.outputs = {out};
    concat.attrs = {{"axis", Attribute(int64_t{0})}};
    for (Node& made : builder.nodes()) added.push_back(std::move(made));
    added.push_back(std::move(concat));
    replaced.insert(static_cast<int>(n));
  }
  if (replaced.empty()) return false;
  SEQRT_RETURN_IF_ERROR(replace_nodes(graph, replaced, std::move(added)));
  return true;
}

}  // namespace

Pass rebase_shape_reads_pass() { return {"rebase_shape_reads", rebase_graph}; }

}  // namespace seqrt
