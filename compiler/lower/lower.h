// Per-backend lowering: the rewrites a backend declares it needs before its
// kernels see a graph (Backend::lowering_needs), run here rather than in
// backend code, and the answer to "can this backend run this node?" for a
// node those rewrites would write out.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "compiler/admit.h"
#include "graph/graph.h"

namespace seqrt {

struct LoweringNeeds {
  // If, Scan and Loop written out as copies of their branch or body where
  // the condition, length or trip count is known at compile
  // (passes/unroll_control_flow.h): for backends that record fixed work.
  // A control-flow node `kernel_supports` accepts stays (Vulkan's Scan
  // loops, backends/vulkan/scan.h).
  bool unroll_control_flow = false;
  bool expand_runge_kutta = false;  // RungeKutta as its stages
  bool expand_variadic = false;     // Sum/Max/Min as two-input chains
  bool expand_einsum = false;  // Einsum of 3+ operands as two-operand steps
  // When some node with f16 tensors has no f16 kernel, the graph's f16
  // tensors computed in f32 between Casts at its edges
  // (passes/compute_f16_in_f32.h).
  bool f16_in_f32 = false;
  // The backend runs subgraphs as they are, through its own kernels, so
  // every node inside them must have one.
  bool kernels_run_subgraphs = false;

  bool rewrites() const {
    return unroll_control_flow || expand_runge_kutta || expand_variadic ||
           expand_einsum || f16_in_f32;
  }
};

// Ok when `node` runs on a backend with these needs whose kernels take what
// `kernel_supports` accepts: as the node stands, or as lowering writes it
// out (the node alone is lowered and every node of the result checked).
// Else kUnsupported with the reason. Subgraphs are not visited.
Status supported_after_lowering(const Graph& graph, const Node& node,
                                const LoweringNeeds& needs,
                                const NodeSupport& kernel_supports);

// Rewrites `graph` as `needs` say and types the result; dims bound in
// `dim_bindings` let a Scan over a symbolic length be written out.
Status lower_graph(Graph& graph, const LoweringNeeds& needs,
                   const NodeSupport& kernel_supports,
                   const std::map<std::string, int64_t>& dim_bindings);

// What every backend's compile runs before its own: verify the graph, check
// its ops, lower it into `lowered` when `needs` rewrite anything, then admit
// it: one error listing every node the backend cannot run, `who` naming the
// backend ("the CPU backend"). Returns the graph to compile: `graph` itself
// or `lowered`.
Result<const Graph*> lower_and_admit(
    const Graph& graph, Graph& lowered, std::string_view who,
    const LoweringNeeds& needs, const NodeSupport& kernel_supports,
    const std::map<std::string, int64_t>& dim_bindings);

}  // namespace seqrt
