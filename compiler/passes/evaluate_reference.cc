#include "compiler/passes/evaluate_reference.h"

#include "ops/registry.h"

namespace seqrt {
namespace {

// Graph inputs, constants and captures, by value id.
Result<std::vector<Tensor>> initial_values(
    const Graph& graph, const std::vector<Tensor>& inputs,
    const std::map<std::string, Tensor>& scope) {
  if (inputs.size() != graph.inputs.size()) {
    return invalid_argument("graph '{}' takes {} inputs, got {}", graph.name,
                            graph.inputs.size(), inputs.size());
  }
  std::vector<Tensor> env(graph.values.size());
  for (ValueId id : graph.captures) {
    auto it = scope.find(graph.value(id).name);
    if (it == scope.end()) {
      return invalid_argument(
          "graph '{}' captures '{}', which no enclosing "
          "graph gives",
          graph.name, graph.value(id).name);
    }
    env[id] = it->second;
  }
  for (const auto& [id, tensor] : graph.constants) env[id] = tensor;
  for (size_t i = 0; i < inputs.size(); ++i) env[graph.inputs[i]] = inputs[i];
  return env;
}

}  // namespace

Result<std::vector<Tensor>> evaluate_reference(
    const Graph& graph, const std::vector<Tensor>& inputs,
    const std::map<std::string, Tensor>& scope) {
  SEQRT_ASSIGN_OR_RETURN(std::vector<Tensor> env,
                         initial_values(graph, inputs, scope));
  SEQRT_ASSIGN_OR_RETURN(std::vector<int> order, graph.topological_order());
  const OpRegistry& registry = OpRegistry::global();
  for (int n : order) {
    const Node& node = graph.nodes[n];
    const OpSchema* schema = registry.find(node.domain, node.op);
    if (schema == nullptr) {
      return unsupported("{}: no such op in the registry", node.label());
    }
    std::vector<const Tensor*> args;
    for (ValueId id : node.inputs) {
      args.push_back(id == kNoValue || env[id].empty() ? nullptr : &env[id]);
    }
    // A body sees the enclosing scope and every value computed so far.
    SubgraphRunner runner = [&](const Graph& body,
                                const std::vector<Tensor>& body_inputs) {
      std::map<std::string, Tensor> inner = scope;
      for (size_t id = 0; id < env.size(); ++id) {
        if (!env[id].empty()) inner[graph.values[id].name] = env[id];
      }
      return evaluate_reference(body, body_inputs, inner);
    };
    KernelContext ctx(node, *schema, std::move(args), runner);
    Status ran = schema->reference(ctx);
    if (!ran.is_ok()) return ran.with_context(node.label());
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      if (node.outputs[i] != kNoValue) {
        env[node.outputs[i]] = std::move(ctx.outputs()[i]);
      }
    }
  }
  std::vector<Tensor> outputs;
  for (ValueId id : graph.outputs) outputs.push_back(env[id]);
  return outputs;
}

}  // namespace seqrt
