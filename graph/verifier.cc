#include "graph/verifier.h"

#include <unordered_map>
#include <unordered_set>

namespace seqrt {
namespace {

// The names visible from enclosing graphs, innermost last.
using Scope = std::vector<const std::unordered_map<std::string, ValueId>*>;

Status verify_in_scope(const Graph& graph, const Scope& outer, int depth,
                       bool standalone = false);

Status check_id(const Graph& graph, ValueId id, const std::string& where) {
  if (id < 0 || static_cast<size_t>(id) >= graph.values.size()) {
    return invalid_model(
        "graph '{}': {} refers to value #{} but the graph has "
        "{} values",
        graph.name, where, id, graph.values.size());
  }
  return Status::ok();
}

bool type_matches(const Value& value, const Tensor& tensor) {
  if (value.dtype != tensor.dtype()) return false;
  if (!value.shape.has_value()) return true;
  if (value.shape->rank() != tensor.rank()) return false;
  for (size_t i = 0; i < tensor.rank(); ++i) {
    const Dim& dim = (*value.shape)[i];
    if (dim.is_fixed() && dim.value() != tensor.dim(i)) return false;
  }
  return true;
}

std::string type_string(const Value& value) {
  return std::string(dtype_name(value.dtype)) +
         (value.shape ? value.shape->to_string() : "(?)");
}

// Marks `id` defined by `what`; a second definition is an error.
Status define(const Graph& graph, std::vector<const char*>& defined, ValueId id,
              const char* what) {
  SEQRT_RETURN_IF_ERROR(check_id(graph, id, what));
  if (defined[id] != nullptr) {
    return invalid_model(
        "graph '{}': value '{}' is defined twice (as {} and "
        "as {})",
        graph.name, graph.value(id).name, defined[id], what);
  }
  defined[id] = what;
  return Status::ok();
}

Status check_names(const Graph& graph,
                   std::unordered_map<std::string, ValueId>& names) {
  for (size_t i = 0; i < graph.values.size(); ++i) {
    const std::string& name = graph.values[i].name;
    if (name.empty()) {
      return invalid_model("graph '{}': value #{} has no name", graph.name, i);
    }
    if (!names.emplace(name, static_cast<ValueId>(i)).second) {
      return invalid_model("graph '{}': two values are named '{}'", graph.name,
                           name);
    }
  }
  return Status::ok();
}

// A subgraph's inputs may be untyped (ONNX Loop/Scan bodies): shape
// inference types them from the node that runs the subgraph.
Status check_definitions(const Graph& graph, const Scope& outer,
                         bool standalone, bool is_subgraph,
                         std::vector<const char*>& defined) {
  for (ValueId id : graph.inputs) {
    SEQRT_RETURN_IF_ERROR(define(graph, defined, id, "a graph input"));
    if (graph.value(id).dtype == DType::kUndefined && !is_subgraph) {
      return invalid_model("graph '{}': input '{}' has no dtype", graph.name,
                           graph.value(id).name);
    }
  }
  for (const auto& [id, tensor] : graph.constants) {
    SEQRT_RETURN_IF_ERROR(define(graph, defined, id, "a constant"));
    if (!type_matches(graph.value(id), tensor)) {
      return invalid_model(
          "graph '{}': constant '{}' holds {}{} but the value "
          "is declared {}",
          graph.name, graph.value(id).name, dtype_name(tensor.dtype()),
          dims_to_string(tensor.dims()), type_string(graph.value(id)));
    }
  }
  for (ValueId id : graph.captures) {
    SEQRT_RETURN_IF_ERROR(define(graph, defined, id, "a capture"));
    bool found = standalone;
    for (const auto* names : outer) {
      found = found || names->count(graph.value(id).name) != 0;
    }
    if (!found) {
      return invalid_model(
          "graph '{}': captured value '{}' is not defined in "
          "any enclosing graph",
          graph.name, graph.value(id).name);
    }
  }
  for (const Node& node : graph.nodes) {
    if (node.op.empty()) {
      return invalid_model("graph '{}': a node has no op", graph.name);
    }
    for (ValueId id : node.outputs) {
      if (id == kNoValue) continue;
      SEQRT_RETURN_IF_ERROR(define(graph, defined, id, "a node output")
                                .with_context(node.label()));
    }
  }
  return Status::ok();
}

Status check_uses(const Graph& graph, const std::vector<const char*>& defined) {
  for (const Node& node : graph.nodes) {
    for (ValueId id : node.inputs) {
      if (id == kNoValue) continue;
      SEQRT_RETURN_IF_ERROR(
          check_id(graph, id, "an input").with_context(node.label()));
      if (defined[id] == nullptr) {
        return invalid_model("{}: input '{}' is never defined", node.label(),
                             graph.value(id).name);
      }
    }
  }
  for (ValueId id : graph.outputs) {
    SEQRT_RETURN_IF_ERROR(check_id(graph, id, "a graph output"));
    if (defined[id] == nullptr) {
      return invalid_model("graph '{}': output '{}' is never defined",
                           graph.name, graph.value(id).name);
    }
  }
  return Status::ok();
}

bool contains(const std::vector<ValueId>& ids, ValueId id) {
  for (ValueId x : ids) {
    if (x == id) return true;
  }
  return false;
}

Status check_state_pairs(const Graph& graph) {
  for (const StatePair& pair : graph.state_pairs) {
    SEQRT_RETURN_IF_ERROR(check_id(graph, pair.input, "a state pair"));
    SEQRT_RETURN_IF_ERROR(check_id(graph, pair.output, "a state pair"));
    const Value& in = graph.value(pair.input);
    const Value& out = graph.value(pair.output);
    if (!contains(graph.inputs, pair.input) ||
        !contains(graph.outputs, pair.output)) {
      return invalid_model(
          "graph '{}': state pair '{}' -> '{}' must join a "
          "graph input to a graph output",
          graph.name, in.name, out.name);
    }
    // An output's type may still be unknown before inference.
    bool same_type =
        (out.dtype == DType::kUndefined || in.dtype == out.dtype) &&
        (!in.shape || !out.shape || in.shape->rank() == out.shape->rank());
    if (!same_type) {
      return invalid_model(
          "graph '{}': state pair '{}' ({}) -> '{}' ({}) "
          "differ in type",
          graph.name, in.name, type_string(in), out.name, type_string(out));
    }
    if (pair.initial && !type_matches(in, *pair.initial)) {
      return invalid_model(
          "graph '{}': initial value of state '{}' does not "
          "match its type {}",
          graph.name, in.name, type_string(in));
    }
  }
  return Status::ok();
}

Status check_subgraphs(const Graph& graph, const Scope& outer,
                       const std::unordered_map<std::string, ValueId>& names,
                       int depth) {
  Scope inner = outer;
  inner.push_back(&names);
  for (const Node& node : graph.nodes) {
    for (const auto& [attr_name, attr] : node.attrs) {
      if (attr.type() != AttrType::kGraph) continue;
      if (attr.as_graph() == nullptr) {
        return invalid_model("{}: graph attribute '{}' is empty", node.label(),
                             attr_name);
      }
      if (depth + 1 > kMaxSubgraphDepth) {
        return make_error(StatusCode::kLimitExceeded,
                          "{}: subgraphs nest deeper than {} levels",
                          node.label(), kMaxSubgraphDepth);
      }
      SEQRT_RETURN_IF_ERROR(
          verify_in_scope(*attr.as_graph(), inner, depth + 1)
              .with_context(node.label() + " attribute '" + attr_name + "'"));
    }
  }
  return Status::ok();
}

Status verify_in_scope(const Graph& graph, const Scope& outer, int depth,
                       bool standalone) {
  std::unordered_map<std::string, ValueId> names;
  SEQRT_RETURN_IF_ERROR(check_names(graph, names));
  std::vector<const char*> defined(graph.values.size(), nullptr);
  SEQRT_RETURN_IF_ERROR(check_definitions(graph, outer, standalone,
                                          depth > 0 || standalone, defined));
  SEQRT_RETURN_IF_ERROR(check_uses(graph, defined));
  SEQRT_RETURN_IF_ERROR(check_state_pairs(graph));
  SEQRT_RETURN_IF_ERROR(graph.topological_order().status());
  return check_subgraphs(graph, outer, names, depth);
}

}  // namespace

Status verify_graph(const Graph& graph, bool standalone_subgraph) {
  return verify_in_scope(graph, {}, 0, standalone_subgraph);
}

}  // namespace seqrt
