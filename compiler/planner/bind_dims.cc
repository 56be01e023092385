#include "compiler/planner/bind_dims.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "compiler/infer/infer_graph.h"
#include "graph/dim_expr.h"

namespace seqrt {

Result<Graph> bind_dims(const Graph& graph,
                        const std::map<std::string, int64_t>& bindings,
                        std::map<ValueId, Tensor>* computed,
                        const std::map<ValueId, Tensor>& input_values) {
  for (const auto& [name, size] : bindings) {
    if (size < 0) {
      return invalid_argument("dim binding {}={} is negative", name, size);
    }
  }
  Graph bound = graph;
  for (Value& value : bound.values) {
    if (!value.shape) continue;
    for (Dim& dim : value.shape->dims()) {
      if (!dim.is_symbol()) continue;
      auto it = bindings.find(dim.symbol_name());
      if (it != bindings.end()) {
        dim = Dim(it->second);
      } else if (is_derived_dim(dim)) {
        // A name inference derived ("past+seq") takes its value from the
        // bound atoms; it is never itself a binding.
        std::optional<int64_t> value =
            DimExpr::from_dim(dim).evaluate(bindings);
        if (value && *value >= 0) dim = Dim(*value);
      }
    }
  }
  for (const auto& [id, tensor] : input_values) {
    bound.constants[id] = tensor;
    bound.value(id).shape = Shape::from_dims(tensor.dims());
  }
  Status status = Status::ok();
  if (computed == nullptr) {
    status = infer_graph(bound);
  } else {
    Result<std::map<ValueId, Tensor>> values = infer_graph_values(bound);
    status = values.status();
    if (values.is_ok()) *computed = std::move(values).value();
  }
  if (!status.is_ok()) {
    return status.with_context(fmt::format("graph '{}' with dims bound as {}",
                                           graph.name,
                                           bindings_to_string(bindings)));
  }
  return bound;
}

std::string bindings_to_string(const std::map<std::string, int64_t>& bindings) {
  std::vector<std::string> parts;
  for (const auto& [name, size] : bindings) {
    parts.push_back(fmt::format("{}={}", name, size));
  }
  return fmt::format("{{{}}}", fmt::join(parts, ", "));
}

bool known_only_at_run_time(const Value& value) {
  if (value.shape) {
    for (const Dim& dim : value.shape->dims()) {
      if (dim.is_symbol()) return false;
    }
  }
  return value.dtype == DType::kUndefined || !value.shape ||
         !value.shape->is_fixed();
}

Result<std::vector<int64_t>> concrete_dims(
    const Value& value, const Node* producer,
    const std::map<std::string, int64_t>& bindings) {
  if (value.dtype != DType::kUndefined && value.shape &&
      value.shape->is_fixed()) {
    std::vector<int64_t> dims = value.shape->fixed_dims();
    Status count = checked_num_elements(dims).status();
    if (!count.is_ok()) {
      return count.with_context(fmt::format("value '{}'", value.name));
    }
    return dims;
  }
  std::vector<std::string> unbound;
  if (value.shape) {
    // Derived dims ("past+seq") name the input dims they come from.
    for (const Dim& dim : value.shape->dims()) {
      for (const std::string& atom : dim_atoms(dim)) {
        const std::string name = "'" + atom + "'";
        if (bindings.count(atom) == 0 &&
            std::find(unbound.begin(), unbound.end(), name) == unbound.end()) {
          unbound.push_back(name);
        }
      }
    }
  }
  const std::string remedy =
      unbound.empty() ? "inference cannot tell it before run time"
                      : fmt::format("bind {}", fmt::join(unbound, ", "));
  const std::string where =
      producer ? fmt::format("{}: output", producer->label()) : "value";
  return invalid_argument(
      "{} '{}' has type {} {} with dims bound as {}: its size cannot be "
      "determined; {}",
      where, value.name, dtype_name(value.dtype),
      value.shape ? value.shape->to_string() : "(rank unknown)",
      bindings_to_string(bindings), remedy);
}

std::map<std::string, int64_t> bindings_from_inputs(
    const Graph& graph, const std::vector<Tensor>& inputs) {
  std::map<std::string, int64_t> bindings;
  for (size_t i = 0; i < graph.inputs.size() && i < inputs.size(); ++i) {
    const Value& value = graph.value(graph.inputs[i]);
    if (!value.shape || value.shape->rank() != inputs[i].rank()) continue;
    for (size_t d = 0; d < value.shape->rank(); ++d) {
      const Dim& dim = (*value.shape)[d];
      if (dim.is_symbol())
        bindings.emplace(dim.symbol_name(), inputs[i].dim(d));
    }
  }
  return bindings;
}

}  // namespace seqrt
