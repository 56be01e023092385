// The memory a run of a graph holds, as the graph-level memory plan
// (compiler/planner) estimates it, for Limits::memory_budget_bytes: a Session
// refuses to compile a graph whose estimate is above the budget, and a run
// whose bound dims push it above, before that run allocates anything. What
// a run allocates for shapes the plan cannot know is checked as it comes
// (graph/run_control.h).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/limits.h"
#include "graph/status.h"

namespace seqrt {

// Bytes of every constant of `graph`.
int64_t constant_bytes(const Graph& graph);

// Arena peak + constants + graph inputs, outputs and states for one run of
// `graph` with its symbolic dims bound; an error when the planner cannot
// size it (a symbol left unbound). Values whose size is known only at run
// time count as 0.
Result<int64_t> estimate_run_bytes(
    const Graph& graph, const std::map<std::string, int64_t>& bindings);

// Checks runs of one graph against a budget, remembering the estimate of
// each binding of the dims met. Thread-safe.
class MemoryBudget {
 public:
  // `graph` must outlive this; `budget_bytes` 0 checks nothing.
  MemoryBudget(const Graph& graph, int64_t budget_bytes)
      : graph_(graph), budget_bytes_(budget_bytes) {}

  // At compile time: the estimate under `bindings` where the planner can
  // size the graph, else the constants alone.
  Status check_compile(const std::map<std::string, int64_t>& bindings) const;
  // Before a run allocates: the estimate under `bindings` (the compile
  // bindings and the fed inputs' dims); where the planner cannot size it,
  // the constants plus `fed_bytes`, the bytes of the fed inputs. Returns
  // the estimate (0 without a budget), for the run's RunControl to check
  // what the run allocates for shapes known only then on top of it.
  Result<int64_t> check_run(const std::map<std::string, int64_t>& bindings,
                            int64_t fed_bytes) const;

 private:
  Status check(int64_t bytes, const std::string& what) const;

  const Graph& graph_;
  int64_t budget_bytes_;
  mutable std::mutex mutex_;  // guards estimates_
  mutable std::map<std::map<std::string, int64_t>, int64_t> estimates_;
};

}  // namespace seqrt
