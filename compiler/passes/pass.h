// Graph passes: named rewrites of a Graph in place. Each says whether it
// changed the graph; run_passes() checks after every pass that the graph
// still verifies and type-checks, so a broken rewrite is caught at the pass
// that made it, not later in a backend.
//
//   SEQRT_ASSIGN_OR_RETURN(std::vector<PassStats> stats,
//                          optimize_graph(graph));
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/status.h"

namespace seqrt {

// Returns true when it changed the graph.
using PassFn = std::function<Result<bool>(Graph& graph)>;

struct Pass {
  std::string name;
  PassFn run;
  // Cleanup passes (folding, dead code) are run again until they change
  // nothing, at most kMaxPassRepeats times.
  bool repeat = false;
};

inline constexpr int kMaxPassRepeats = 8;

struct PassStats {
  std::string name;
  int runs = 0;  // how often it ran (repeat passes run until unchanged)
  bool changed = false;
  size_t nodes_before = 0;
  size_t nodes_after = 0;
};

// Runs `passes` in order on `graph`. After each pass that changed it, the
// graph must pass verify_graph and infer_graph; the error names the pass.
Result<std::vector<PassStats>> run_passes(Graph& graph,
                                          const std::vector<Pass>& passes);

// The default pipeline: inference, folding, dead code, the fusions, then
// folding and dead code again for what the fusions left behind.
std::vector<Pass> default_passes();

// run_passes(graph, default_passes()).
Result<std::vector<PassStats>> optimize_graph(Graph& graph);

// "fold_constants  3 runs  120 -> 97 nodes", one line per pass.
std::string format_pass_stats(const std::vector<PassStats>& stats);

}  // namespace seqrt
