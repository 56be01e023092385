// Resource limits a Session enforces on the graphs it compiles and the runs
// it makes, in one place with their defaults. Each limit is raised through
// SessionOptions::limits, the C API (seqrt_session_options_set_limit) or
// the CLI flag named in its error ("--max-tensor-bytes"). The tensor limits
// and the budget hold for shapes known at compile time and, through the
// run's RunControl (graph/run_control.h), for every allocation of a run,
// computed shapes included. The defaults fit
// the models seqrt targets with room to spare; they exist so that a
// malformed or hostile file fails with a clear message instead of asking
// for terabytes or running for hours.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/dtype.h"
#include "graph/graph.h"
#include "graph/shape.h"
#include "graph/status.h"
#include "graph/verifier.h"

namespace seqrt {

struct Limits {
  // Largest single tensor (a weight, an input or a value with fixed dims).
  int64_t max_tensor_bytes = int64_t{16} << 30;
  // Most elements in one tensor; at most kMaxElements, the bound that keeps
  // shape x dtype arithmetic free of overflow.
  int64_t max_tensor_elements = int64_t{1} << 34;
  // Nodes in the graph, subgraphs included.
  int64_t max_nodes = 1'000'000;
  // Subgraph nesting; at most kMaxSubgraphDepth, the loaders' fixed bound.
  int64_t max_subgraph_depth = 16;
  // Bytes a session may hold for one run: arena + constants + inputs and
  // outputs, as the memory plan estimates them, plus what a run allocates
  // for shapes known only then. 0: no budget.
  int64_t memory_budget_bytes = 0;
  // Iterations of one Loop node in one run (a trip count from an input, or
  // a loop only its body's condition ends).
  int64_t max_loop_iterations = int64_t{1} << 31;
  // Milliseconds one run may take before it stops with kDeadlineExceeded,
  // checked between nodes and between Loop/Scan iterations. 0: no deadline.
  int64_t run_timeout_ms = 0;
};

// Which limit, for the setters of the C API and the CLI.
enum class LimitKind {
  kMaxTensorBytes,
  kMaxTensorElements,
  kMaxNodes,
  kMaxSubgraphDepth,
  kMemoryBudgetBytes,
  kMaxLoopIterations,
  kRunTimeoutMs,
};

// "max_tensor_bytes", ... and the CLI flag "--max-tensor-bytes", ...
const char* limit_name(LimitKind kind);
const char* limit_flag(LimitKind kind);

// Sets one limit, checking its range (>= 1, or >= 0 for the budget and the
// timeout; the
// element count at most kMaxElements, the depth at most kMaxSubgraphDepth).
Status set_limit(Limits& limits, LimitKind kind, int64_t value);

// The error for a value above a limit: "<subject> needs 12.0 GiB, above
// max_tensor_bytes (4.0 GiB); raise it with --max-tensor-bytes /
// SessionOptions::limits". `amount` and `limit` are in the limit's unit.
Status limit_error(LimitKind kind, const std::string& subject, int64_t amount,
                   int64_t limit);

// A tensor of `dtype` and `dims` against the element and byte limits;
// `subject` names it ("tensor 'w'").
Status check_tensor_limits(const std::string& subject, DType dtype,
                           const std::vector<int64_t>& dims,
                           const Limits& limits);

// The graph against every static limit: node count and subgraph depth
// (subgraphs included), and each constant and each fixed-shape value of
// the top-level graph against the tensor limits. `source` starts each
// message ("model.onnx", "graph 'demo'").
Status check_graph_limits(const Graph& graph, const Limits& limits,
                          const std::string& source);

// "512 B", "1.5 KiB", "12.0 GiB".
std::string format_bytes(int64_t bytes);

}  // namespace seqrt
