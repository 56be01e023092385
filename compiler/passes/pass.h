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
// Lines a pass reports about what it did ("Scan 'scan' -> seqrt::Retention"),
// shown under its statistics by `seqrt inspect --passes`.
using PassNotes = std::vector<std::string>;
using NotingPassFn =
    std::function<Result<bool>(Graph& graph, PassNotes& notes)>;

struct Pass {
  std::string name;
  PassFn run;
  // Cleanup passes (folding, dead code) are run again until they change
  // nothing, at most kMaxPassRepeats times.
  bool repeat = false;
  // When set, run_passes calls this instead of `run` and keeps its notes.
  NotingPassFn run_noting;
};

inline constexpr int kMaxPassRepeats = 8;

struct PassStats {
  std::string name;
  int runs = 0;  // how often it ran (repeat passes run until unchanged)
  bool changed = false;
  size_t nodes_before = 0;
  size_t nodes_after = 0;
  PassNotes notes;  // from run_noting, over all runs
};

// Runs `passes` in order on `graph`. After each pass that changed it, the
// graph must pass verify_graph and infer_graph; the error names the pass.
Result<std::vector<PassStats>> run_passes(Graph& graph,
                                          const std::vector<Pass>& passes);

// The default pipeline: inference, folding, dead code, the fusions, then
// folding and dead code again for what the fusions left behind.
std::vector<Pass> default_passes();

// run_passes(graph, default_passes()), then marks the graph as optimised
// by this pipeline (kOptimizedByKey), so that a .seqrt file written from it
// (`seqrt convert --optimize`) skips the passes when it is loaded.
Result<std::vector<PassStats>> optimize_graph(Graph& graph);

// The metadata key of that mark; its value is default_pipeline_id().
inline constexpr char kOptimizedByKey[] = "seqrt.optimized_by";
// This build's default pipeline: kPipelineRevision and the pass names.
std::string default_pipeline_id();
// Raised whenever a pass changes what it writes, so that files optimised
// by an older pipeline are optimised again.
inline constexpr int kPipelineRevision = 1;
// True when `graph` carries the mark of this very pipeline. A mark of
// another pipeline (an older seqrt) does not count: such graphs are
// optimised again. Verification and typing never depend on it.
bool is_optimized(const Graph& graph);

// "fold_constants  3 runs  120 -> 97 nodes", one line per pass, each
// followed by the pass's notes, indented.
std::string format_pass_stats(const std::vector<PassStats>& stats);

}  // namespace seqrt
