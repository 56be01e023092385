#include "compiler/infer/infer_graph.h"

#include <algorithm>
#include <climits>
#include <map>
#include <memory>
#include <string>

#include <fmt/format.h>

namespace seqrt {
namespace {

Status unknown_ops_error(const Graph& graph, const OpRegistry& registry) {
  std::vector<std::string> missing;
  for (const Node& node : graph.nodes) {
    if (registry.find(node.domain, node.op) == nullptr) {
      missing.push_back(fmt::format(
          "{}{} (node '{}')",
          node.domain.empty() ? "" : node.domain + "::", node.op, node.name));
    }
  }
  if (missing.empty()) return Status::ok();
  return unsupported("graph '{}' uses {} unknown op(s): {}", graph.name,
                     missing.size(), fmt::join(missing, ", "));
}

// Merges an inferred type into a declared one; the declared side wins where
// it is more specific, a contradiction is an error.
Status merge_type(const Node& node, Value& value, const ValueInfo& inferred) {
  if (inferred.dtype != DType::kUndefined) {
    if (value.dtype != DType::kUndefined && value.dtype != inferred.dtype) {
      return invalid_model("{}: output '{}' is declared {} but the op gives {}",
                           node.label(), value.name, dtype_name(value.dtype),
                           dtype_name(inferred.dtype));
    }
    value.dtype = inferred.dtype;
  }
  if (!inferred.shape.has_value()) return Status::ok();
  if (!value.shape.has_value()) {
    value.shape = inferred.shape;
    return Status::ok();
  }
  Shape& declared = *value.shape;
  if (declared.rank() != inferred.shape->rank()) {
    return invalid_model(
        "{}: output '{}' is declared with shape {} but the op gives {}",
        node.label(), value.name, declared.to_string(),
        inferred.shape->to_string());
  }
  for (size_t i = 0; i < declared.rank(); ++i) {
    const Dim& got = (*inferred.shape)[i];
    if (declared[i].is_fixed() && got.is_fixed() && declared[i] != got) {
      return invalid_model(
          "{}: output '{}' is declared with shape {} but the op gives {}",
          node.label(), value.name, declared.to_string(),
          inferred.shape->to_string());
    }
    if (!declared[i].is_fixed() && !got.is_unknown()) declared[i] = got;
  }
  return Status::ok();
}

// Small integer or float tensors computed at inference time (shape
// arithmetic such as Shape -> Gather -> Concat -> Reshape); larger tensors
// are left to constant folding.
constexpr int64_t kMaxInferredValueElements = 4096;

// Evaluates a node whose inputs are all known and small with its reference
// kernel; returns no values when it cannot.
std::vector<Tensor> evaluate_known(const Node& node, const OpSchema& schema,
                                   const std::vector<ValueInfo>& inputs) {
  if (node.has_subgraphs() || inputs.empty()) return {};
  std::vector<const Tensor*> args;
  for (const ValueInfo& info : inputs) {
    if (info.dtype == DType::kUndefined) {
      args.push_back(nullptr);
      continue;
    }
    if (info.value == nullptr ||
        info.value->num_elements() > kMaxInferredValueElements) {
      return {};
    }
    args.push_back(info.value);
  }
  KernelContext ctx(node, schema, std::move(args));
  if (!schema.reference(ctx).is_ok()) return {};
  for (const Tensor& out : ctx.outputs()) {
    if (out.num_elements() > kMaxInferredValueElements) return {};
  }
  return std::move(ctx.outputs());
}

// A known value for an integer output whose symbolic elements are all
// constants (Gather of the fixed dim of a partly symbolic Shape), so that
// ops reading only known values see it; empty when not all are constant.
Tensor constant_from_symbolic(const ValueInfo& out,
                              const std::vector<DimExpr>& elements) {
  if (!out.shape || out.shape->rank() > 1) return Tensor();
  if (out.shape->rank() == 1 &&
      (*out.shape)[0] != Dim(static_cast<int64_t>(elements.size()))) {
    return Tensor();
  }
  if (out.shape->rank() == 0 && elements.size() != 1) return Tensor();
  std::vector<int64_t> values;
  for (const DimExpr& element : elements) {
    std::optional<int64_t> value = element.constant();
    if (!value) return Tensor();
    values.push_back(*value);
  }
  std::vector<int64_t> dims;
  if (out.shape->rank() == 1)
    dims.push_back(static_cast<int64_t>(values.size()));
  if (out.dtype == DType::kI64)
    return Tensor::from_vector<int64_t>(dims, values);
  if (out.dtype == DType::kI32) {
    std::vector<int32_t> narrow;
    for (int64_t value : values) {
      if (value < INT32_MIN || value > INT32_MAX) return Tensor();
      narrow.push_back(static_cast<int32_t>(value));
    }
    return Tensor::from_vector<int32_t>(dims, narrow);
  }
  return Tensor();
}

// Whether inference already says an output is too large to evaluate, so a
// ConstantOfShape or Expand to a huge shape is not computed just to be
// dropped (unknown shapes are evaluated and checked afterwards).
bool has_large_output(const std::vector<ValueInfo>& outputs) {
  for (const ValueInfo& out : outputs) {
    if (!out.shape || !out.shape->is_fixed()) continue;
    int64_t elements = 1;
    for (const Dim& dim : out.shape->dims()) {
      if (dim.value() > kMaxInferredValueElements) return true;
      elements *= std::max<int64_t>(dim.value(), 1);
      if (elements > kMaxInferredValueElements) return true;
    }
  }
  return false;
}

// Values of enclosing graphs by name, for typing a subgraph's captures.
using Scope = std::map<std::string, const Value*>;

Status infer_graph_in_scope(Graph& graph, const Scope& outer,
                            const OpRegistry& registry,
                            std::map<ValueId, Tensor>* computed = nullptr);

// Types each subgraph of `node` before the node itself is inferred, so that
// If/Scan/Loop inference can read the subgraphs' output types. A capture
// without a declared type takes the type of the enclosing value it names.
// The subgraph is typed as a copy and swapped in, leaving alone any other
// graph that shares the attribute.
Status infer_subgraphs(const Graph& graph, Node& node,
                       const std::vector<ValueInfo>& inputs, const Scope& outer,
                       const OpRegistry& registry) {
  Scope scope = outer;
  for (const Value& value : graph.values) scope[value.name] = &value;
  const OpSchema& schema = *registry.find(node.domain, node.op);
  for (auto& [name, attr] : node.attrs) {
    if (attr.type() != AttrType::kGraph) continue;
    InferContext ctx(node, schema, inputs);
    if (schema.subgraph_is_live && !schema.subgraph_is_live(ctx, name)) {
      continue;
    }
    Graph body = *attr.as_graph();
    if (schema.type_body_inputs) {
      SEQRT_RETURN_IF_ERROR(schema.type_body_inputs(ctx, name, body));
    }
    for (ValueId id : body.captures) {
      Value& capture = body.value(id);
      auto it = scope.find(capture.name);
      if (it == scope.end()) continue;
      if (capture.dtype == DType::kUndefined) capture.dtype = it->second->dtype;
      if (!capture.shape.has_value()) capture.shape = it->second->shape;
    }
    SEQRT_RETURN_IF_ERROR(
        infer_graph_in_scope(body, scope, registry)
            .with_context(fmt::format("{}: in '{}'", node.label(), name)));
    attr = Attribute(std::make_shared<Graph>(std::move(body)));
  }
  return Status::ok();
}

}  // namespace

Status check_ops(const Graph& graph, const OpRegistry& registry) {
  SEQRT_RETURN_IF_ERROR(unknown_ops_error(graph, registry));
  for (const Node& node : graph.nodes) {
    SEQRT_RETURN_IF_ERROR(
        check_node(node, *registry.find(node.domain, node.op)));
    for (const auto& [name, attr] : node.attrs) {
      if (attr.type() == AttrType::kGraph) {
        SEQRT_RETURN_IF_ERROR(check_ops(*attr.as_graph(), registry));
      }
    }
  }
  return Status::ok();
}

Status infer_graph(Graph& graph, const OpRegistry& registry) {
  return infer_graph_in_scope(graph, Scope(), registry);
}

Result<std::map<ValueId, Tensor>> infer_graph_values(
    Graph& graph, const OpRegistry& registry) {
  std::map<ValueId, Tensor> computed;
  SEQRT_RETURN_IF_ERROR(
      infer_graph_in_scope(graph, Scope(), registry, &computed));
  return computed;
}

namespace {

// The storage-only dtypes reach only the ops that say they take them.
Status storage_only_error(const Node& node, const OpSchema& schema,
                          const char* side, const std::string& name,
                          DType dtype) {
  return invalid_model(
      "[{}] {}: {} '{}' has dtype {}, which this op does not take (only "
      "Cast, CastLike, Constant and the quantization ops take i4, u4 and "
      "the float8 types)",
      schema.qualified_name(), node.label(), side, name, dtype_name(dtype));
}

Status check_storage_only_inputs(const Graph& graph, const Node& node,
                                 const OpSchema& schema) {
  if (schema.storage_only_types) return Status::ok();
  for (ValueId id : node.inputs) {
    if (id == kNoValue) continue;
    const Value& value = graph.value(id);
    if (is_storage_only(value.dtype)) {
      return storage_only_error(node, schema, "input", value.name, value.dtype);
    }
  }
  return Status::ok();
}

Status check_storage_only_outputs(const Node& node, const OpSchema& schema,
                                  const InferContext& ctx) {
  if (schema.storage_only_types) return Status::ok();
  for (size_t i = 0; i < ctx.outputs().size(); ++i) {
    if (is_storage_only(ctx.outputs()[i].dtype)) {
      return storage_only_error(node, schema, "output", std::to_string(i),
                                ctx.outputs()[i].dtype);
    }
  }
  return Status::ok();
}

Status infer_graph_in_scope(Graph& graph, const Scope& outer,
                            const OpRegistry& registry,
                            std::map<ValueId, Tensor>* computed) {
  SEQRT_RETURN_IF_ERROR(check_ops(graph, registry));
  SEQRT_ASSIGN_OR_RETURN(std::vector<int> order, graph.topological_order());
  std::map<ValueId, Tensor> known(graph.constants.begin(),
                                  graph.constants.end());
  auto known_value = [&](ValueId id) -> const Tensor* {
    auto it = known.find(id);
    return it == known.end() ? nullptr : &it->second;
  };
  // Elements of small integer values known only symbolically.
  std::map<ValueId, std::vector<DimExpr>> symbolic;
  auto symbolic_value = [&](ValueId id) {
    auto it = symbolic.find(id);
    return it == symbolic.end()
               ? std::optional<std::vector<DimExpr>>()
               : std::optional<std::vector<DimExpr>>(it->second);
  };
  // An integer scalar input is an atom of its own, so shape arithmetic in
  // which its value cancels (Range(n, n+seq)) still gives dims.
  for (ValueId id : graph.inputs) {
    const Value& value = graph.value(id);
    if ((value.dtype == DType::kI64 || value.dtype == DType::kI32) &&
        value.shape && value.shape->rank() == 0 && !known.count(id)) {
      symbolic[id] = {DimExpr::value_atom(value.name)};
    }
  }
  for (int index : order) {
    const Node& node = graph.nodes[index];
    const OpSchema& schema = *registry.find(node.domain, node.op);
    std::vector<ValueInfo> inputs;
    inputs.reserve(node.inputs.size());
    for (ValueId id : node.inputs) {
      if (id == kNoValue) {
        inputs.emplace_back();
        continue;
      }
      const Value& value = graph.value(id);
      if (value.dtype == DType::kUndefined) {
        return invalid_model("{}: input '{}' has no known dtype", node.label(),
                             value.name);
      }
      inputs.push_back(ValueInfo{value.dtype, value.shape, known_value(id),
                                 symbolic_value(id)});
    }
    if (node.has_subgraphs()) {
      SEQRT_RETURN_IF_ERROR(
          infer_subgraphs(graph, graph.nodes[index], inputs, outer, registry));
    }
    SEQRT_RETURN_IF_ERROR(check_storage_only_inputs(graph, node, schema));
    InferContext ctx(node, schema, inputs);
    SEQRT_RETURN_IF_ERROR(schema.infer(ctx));
    SEQRT_RETURN_IF_ERROR(check_storage_only_outputs(node, schema, ctx));
    std::vector<Tensor> values;
    if (!has_large_output(ctx.outputs())) {
      values = evaluate_known(node, schema, inputs);
    }
    if (values.empty()) values = ctx.output_values();
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      if (node.outputs[i] == kNoValue) continue;
      SEQRT_RETURN_IF_ERROR(
          merge_type(node, graph.value(node.outputs[i]), ctx.outputs()[i]));
      if (i < values.size() && !values[i].empty()) {
        known[node.outputs[i]] = values[i];
        if (computed != nullptr && !node.has_subgraphs()) {
          (*computed)[node.outputs[i]] = values[i];
        }
        continue;
      }
      if (i < ctx.output_symbolic().size() && ctx.output_symbolic()[i]) {
        const std::vector<DimExpr>& elements = *ctx.output_symbolic()[i];
        Tensor constant = constant_from_symbolic(
            ValueInfo{graph.value(node.outputs[i]).dtype,
                      graph.value(node.outputs[i]).shape},
            elements);
        if (!constant.empty()) {
          if (computed != nullptr && !node.has_subgraphs()) {
            (*computed)[node.outputs[i]] = constant;
          }
          known[node.outputs[i]] = std::move(constant);
        } else {
          symbolic[node.outputs[i]] = elements;
        }
      }
    }
  }
  return Status::ok();
}

}  // namespace
}  // namespace seqrt
