// Control flow written out for backends that record a fixed schedule of
// kernels (Vulkan): an If whose condition is known at compile time becomes
// its branch, a Scan over a length known at compile time one copy of its
// body per step, a Loop with a constant trip count whose body passes its
// condition on unchanged one copy per iteration. The CPU backend runs
// control flow itself and never calls this.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "graph/graph.h"
#include "graph/status.h"

namespace seqrt {

struct UnrollOptions {
  // Sizes of symbolic dims (CompileOptions::dim_bindings): a Scan over a
  // bound dim unrolls.
  std::map<std::string, int64_t> dim_bindings;
  // At most this many body nodes written out for one node.
  int64_t max_nodes = 16384;
  // Control-flow nodes the backend runs itself (a Vulkan Scan run as a
  // loop): left as they are. Null: none.
  std::function<bool(const Graph&, const Node&)> keep;
};

// ONNX If, Scan or Loop.
bool is_control_flow(const Node& node);

// Why `node` (control flow of `graph`) cannot be written out, or "" when
// it can.
std::string unroll_blocker(const Graph& graph, const Node& node,
                           const UnrollOptions& options);

// Writes out every control-flow node of `graph` that can be, then those
// that this brought up from inside branches and bodies. The nodes' outputs
// keep their values, so graph outputs and readers are unchanged. Returns
// whether anything changed; the caller re-infers types.
Result<bool> unroll_control_flow(Graph& graph, const UnrollOptions& options);

}  // namespace seqrt
