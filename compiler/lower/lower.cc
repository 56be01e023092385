#include "compiler/lower/lower.h"

#include <functional>

#include "compiler/infer/infer_graph.h"
#include "compiler/lower/node_alone.h"
#include "compiler/passes/compute_f16_in_f32.h"
#include "compiler/passes/expand_einsum.h"
#include "compiler/passes/expand_runge_kutta.h"
#include "compiler/passes/expand_variadic.h"
#include "compiler/passes/unroll_control_flow.h"
#include "graph/verifier.h"

namespace seqrt {
namespace {

bool touches_f16(const Graph& graph, const Node& node) {
  for (const auto* ids : {&node.inputs, &node.outputs}) {
    for (ValueId id : *ids) {
      if (id != kNoValue && graph.value(id).dtype == DType::kF16) return true;
    }
  }
  return false;
}

// `node` alone, rewritten by `rewrite` and typed; then every node of the
// result must run (as it stands or lowered again). `how` names the form in
// the reason: "as copies of its body", "as two-operand steps", ...
Status supported_when_rewritten(
    const Graph& graph, const Node& node, const LoweringNeeds& needs,
    const NodeSupport& kernel_supports, const char* how,
    const std::function<Result<bool>(Graph&)>& rewrite) {
  Graph part = node_alone(graph, node);
  Result<bool> rewritten = rewrite(part);
  if (rewritten.is_ok() && !*rewritten) {
    return unsupported("{}: cannot be rewritten {}", node.label(), how);
  }
  Status status = rewritten.status();
  if (status.is_ok()) status = infer_graph(part);
  if (!status.is_ok()) {
    return unsupported("{}: {}: {}", node.label(), how, status.message());
  }
  for (const Node& step : part.nodes) {
    status = supported_after_lowering(part, step, needs, kernel_supports);
    if (!status.is_ok()) {
      return unsupported("{}: {}: {}", node.label(), how, status.message());
    }
  }
  return Status::ok();
}

// The node as the backend's kernels see it, or, when it has f16 tensors
// and no f16 kernel, in f32 between Casts.
Status kernel_or_f32_supported(const Graph& graph, const Node& node,
                               const LoweringNeeds& needs,
                               const NodeSupport& kernel_supports) {
  Status as_is = kernel_supports(graph, node);
  if (as_is.is_ok() || !needs.f16_in_f32 || !touches_f16(graph, node)) {
    return as_is;
  }
  Graph part = node_alone(graph, node);
  Status rewritten = compute_f16_in_f32(part).status();
  if (rewritten.is_ok()) rewritten = infer_graph(part);
  if (!rewritten.is_ok()) {
    return unsupported("{}: in f32: {}", node.label(), rewritten.message());
  }
  for (const Node& step : part.nodes) {
    Status status = kernel_supports(part, step);
    if (!status.is_ok()) {
      return unsupported("{}: in f32: {}", node.label(), status.message());
    }
  }
  return Status::ok();
}

}  // namespace

Status supported_after_lowering(const Graph& graph, const Node& node,
                                const LoweringNeeds& needs,
                                const NodeSupport& kernel_supports) {
  if (needs.unroll_control_flow && is_control_flow(node)) {
    // A backend that runs this node itself (Vulkan's Scan loops) keeps it.
    if (kernel_supports(graph, node).is_ok()) return Status::ok();
    const std::string blocker = unroll_blocker(graph, node, {});
    if (!blocker.empty()) {
      return unsupported(
          "{}: this backend runs control flow only written out, and this "
          "node cannot be: {}",
          node.label(), blocker);
    }
    return supported_when_rewritten(graph, node, needs, kernel_supports,
                                    "as copies of its body", [&](Graph& part) {
                                      UnrollOptions unroll;
                                      unroll.keep = [&](const Graph& g,
                                                        const Node& n) {
                                        return kernel_supports(g, n).is_ok();
                                      };
                                      return unroll_control_flow(part, unroll);
                                    });
  }
  if (needs.expand_einsum && is_einsum_to_expand(node)) {
    return supported_when_rewritten(graph, node, needs, kernel_supports,
                                    "as two-operand steps", expand_einsum);
  }
  if (needs.expand_runge_kutta && node.domain == kSeqrtDomain &&
      node.op == "RungeKutta") {
    std::string blocker = runge_kutta_expansion_blocker(graph, node);
    if (!blocker.empty()) {
      return unsupported("{}: cannot be written out as its stages: {}",
                         node.label(), blocker);
    }
    return supported_when_rewritten(graph, node, needs, kernel_supports,
                                    "as its stages", expand_runge_kutta);
  }
  if (needs.expand_variadic && is_variadic_to_expand(node)) {
    return supported_when_rewritten(graph, node, needs, kernel_supports,
                                    "as two-input steps", expand_variadic);
  }
  return kernel_or_f32_supported(graph, node, needs, kernel_supports);
}

Status lower_graph(Graph& graph, const LoweringNeeds& needs,
                   const NodeSupport& kernel_supports,
                   const std::map<std::string, int64_t>& dim_bindings) {
  bool changed = false;
  if (needs.unroll_control_flow) {
    UnrollOptions unroll;
    unroll.dim_bindings = dim_bindings;
    unroll.keep = [&](const Graph& g, const Node& n) {
      return kernel_supports(g, n).is_ok();
    };
    SEQRT_ASSIGN_OR_RETURN(bool unrolled, unroll_control_flow(graph, unroll));
    if (unrolled) SEQRT_RETURN_IF_ERROR(infer_graph(graph));
  }
  if (needs.expand_runge_kutta) {
    SEQRT_ASSIGN_OR_RETURN(bool stages, expand_runge_kutta(graph));
    changed |= stages;
  }
  if (needs.expand_variadic) {
    SEQRT_ASSIGN_OR_RETURN(bool chains, expand_variadic(graph));
    changed |= chains;
  }
  if (needs.expand_einsum) {
    SEQRT_ASSIGN_OR_RETURN(bool steps, expand_einsum(graph));
    changed |= steps;
  }
  if (changed) SEQRT_RETURN_IF_ERROR(infer_graph(graph));
  if (!needs.f16_in_f32) return Status::ok();
  // A graph the f16 kernels take as it is keeps its exact f16 rounding.
  bool needs_f32 = false;
  for (const Node& node : graph.nodes) {
    needs_f32 |=
        touches_f16(graph, node) && !kernel_supports(graph, node).is_ok();
  }
  if (!needs_f32) return Status::ok();
  SEQRT_RETURN_IF_ERROR(compute_f16_in_f32(graph).status());
  return infer_graph(graph);
}

Result<const Graph*> lower_and_admit(
    const Graph& graph, Graph& lowered, std::string_view who,
    const LoweringNeeds& needs, const NodeSupport& kernel_supports,
    const std::map<std::string, int64_t>& dim_bindings) {
  SEQRT_RETURN_IF_ERROR(verify_graph(graph));
  SEQRT_RETURN_IF_ERROR(check_ops(graph));
  const Graph* target = &graph;
  if (needs.rewrites()) {
    lowered = graph;
    SEQRT_RETURN_IF_ERROR(
        lower_graph(lowered, needs, kernel_supports, dim_bindings));
    target = &lowered;
  }
  SEQRT_RETURN_IF_ERROR(require_supported(
      *target, who,
      [&](const Graph& g, const Node& n) {
        return supported_after_lowering(g, n, needs, kernel_supports);
      },
      needs.kernels_run_subgraphs ? Subgraphs::kVisit : Subgraphs::kSkip));
  return target;
}

}  // namespace seqrt
