// Constant folding: a node whose inputs are all constants (and that holds
// no subgraph) runs once with its reference kernel, and its outputs become
// constants. Values that inference can tell without the data (Shape of a
// fixed-shape input) are folded too. Nothing larger than kMaxFoldedBytes is
// folded, so a ConstantOfShape or Expand never blows a model up.
#include <optional>
#include <set>
#include <vector>

#include "compiler/passes/passes.h"
#include "compiler/passes/rewrite.h"
#include "ops/registry.h"

namespace seqrt {
namespace {

// A folded tensor may replace the value when the declared type allows it.
bool fits(const Value& value, const Tensor& tensor) {
  if (tensor.empty() || tensor.byte_size() > kMaxFoldedBytes) return false;
  if (value.dtype != DType::kUndefined && value.dtype != tensor.dtype()) {
    return false;
  }
  if (!value.shape) return true;
  if (value.shape->rank() != tensor.rank()) return false;
  for (size_t d = 0; d < tensor.rank(); ++d) {
    const Dim& dim = (*value.shape)[d];
    if (dim.is_fixed() && dim.value() != tensor.dim(d)) return false;
  }
  return true;
}

// True when a declared output is already known to be too big to fold.
bool too_big(const Graph& graph, const Node& node) {
  for (ValueId id : node.outputs) {
    if (id == kNoValue) continue;
    const Value& value = graph.value(id);
    if (!value.shape || !value.shape->is_fixed()) continue;
    Result<int64_t> count = checked_num_elements(value.shape->fixed_dims());
    if (!count.is_ok()) return true;
    const size_t bytes =
        value.dtype == DType::kUndefined
            ? static_cast<size_t>(*count)
            : dtype_bytes(value.dtype, static_cast<size_t>(*count));
    if (bytes > kMaxFoldedBytes) return true;
  }
  return false;
}

// The node's outputs from its reference kernel (all inputs constant) or
// from its inference (values known without data); nullopt when neither.
std::optional<std::vector<Tensor>> evaluate(const Graph& graph,
                                            const Node& node,
                                            const OpSchema& schema) {
  bool all_constant = true;
  std::vector<const Tensor*> args;
  std::vector<ValueInfo> infos;
  for (ValueId id : node.inputs) {
    if (id == kNoValue) {
      args.push_back(nullptr);
      infos.emplace_back();
      continue;
    }
    const Tensor* tensor = graph.constant(id);
    all_constant = all_constant && tensor != nullptr;
    args.push_back(tensor);
    infos.push_back(
        ValueInfo{graph.value(id).dtype, graph.value(id).shape, tensor});
  }
  if (all_constant) {
    KernelContext ctx(node, schema, std::move(args));
    if (!schema.reference(ctx).is_ok()) return std::nullopt;
    return std::move(ctx.outputs());
  }
  InferContext ctx(node, schema, std::move(infos));
  if (!schema.infer(ctx).is_ok()) return std::nullopt;
  std::vector<Tensor> values = ctx.output_values();
  if (values.size() != node.outputs.size()) return std::nullopt;
  return values;
}

Result<bool> fold_graph(Graph& graph) {
  const OpRegistry& registry = OpRegistry::global();
  std::set<int> folded;
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const Node& node = graph.nodes[n];
    const OpSchema* schema = registry.find(node.domain, node.op);
    if (schema == nullptr || node.has_subgraphs() || too_big(graph, node)) {
      continue;
    }
    std::optional<std::vector<Tensor>> outputs = evaluate(graph, node, *schema);
    if (!outputs) continue;
    bool all_fit = true;
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      if (node.outputs[i] == kNoValue) continue;
      all_fit = all_fit && fits(graph.value(node.outputs[i]), (*outputs)[i]);
    }
    if (!all_fit) continue;
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      ValueId id = node.outputs[i];
      if (id == kNoValue) continue;
      Value& value = graph.value(id);
      value.dtype = (*outputs)[i].dtype();
      value.shape = (*outputs)[i].shape();
      graph.constants[id] = (*outputs)[i];
    }
    folded.insert(static_cast<int>(n));
  }
  SEQRT_ASSIGN_OR_RETURN(bool sub_changed,
                         rewrite_subgraphs(graph, fold_graph));
  if (folded.empty()) return sub_changed;
  SEQRT_RETURN_IF_ERROR(remove_nodes(graph, folded));
  return true;
}

}  // namespace

Pass fold_constants_pass() {
  return {"fold_constants", fold_graph, /*repeat=*/true};
}

}  // namespace seqrt
