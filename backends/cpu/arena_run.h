// Runs a compiled graph with its node outputs in one arena laid out by the
// graph-level memory plan (compiler/planner, DESIGN.md §5.1). A plan is made
// once per binding of the symbolic dims the runs meet and kept, with the
// shape arithmetic that binding fixes computed once (kPrecomputed values,
// whose nodes the runs skip); arenas are kept between runs, one per run in
// flight.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backends/host/interpreter.h"
#include "compiler/planner/memory_plan.h"

namespace seqrt::cpu {

class ArenaRunner {
 public:
  // `graph` must outlive the runner.
  explicit ArenaRunner(const Graph& graph) : graph_(graph) {}

  // Runs `graph` as interpret_graph() does with `options` (schedule and
  // kernels), placing node outputs in the plan's arena. A graph the
  // planner cannot lay out for these dims runs with every tensor on the
  // heap. Kernels that return a view the plan does not know of get their
  // output copied out of the arena; graph outputs never point into it.
  Result<std::vector<Tensor>> run(std::vector<Tensor> inputs,
                                  const KernelChooser& choose,
                                  InterpretOptions options) const;

  // The plan for the symbolic dims of `inputs`, or null: when the graph
  // cannot be planned for them, and the first time a binding is met. A
  // binding met once (each step of a decode whose KV cache grows, each new
  // prompt length) runs on the heap: planning it (typing the whole graph
  // again) costs several times what the arena and the precomputed shape
  // arithmetic save in one run. Its second run plans it; a graph without
  // symbolic dims, whose one binding always repeats, is planned at once.
  std::shared_ptr<const MemoryPlan> plan_for(
      const std::vector<Tensor>& inputs) const;

  struct Stats {
    int64_t plans_made = 0;    // distinct dim bindings planned
    int64_t first_sights = 0;  // runs of a binding not met before, unplanned
    int64_t placed = 0;        // node outputs written in the arena
    int64_t copied_out = 0;    // outputs copied out of the arena
    int64_t arenas_made = 0;   // arena allocations
  };
  Stats stats() const;

 private:
  using Bindings = std::map<std::string, int64_t>;
  // An arena of at least `bytes` that no other run holds.
  std::shared_ptr<Tensor> acquire_arena(int64_t bytes) const;
  void release_arena(std::shared_ptr<Tensor> arena) const;

  const Graph& graph_;
  mutable std::mutex mutex_;  // guards plans_, met_once_ and free_arenas_
  mutable std::map<Bindings, std::shared_ptr<const MemoryPlan>> plans_;
  mutable std::deque<Bindings> met_once_;  // the latest, oldest first
  mutable std::vector<std::shared_ptr<Tensor>> free_arenas_;
  mutable std::atomic<int64_t> plans_made_{0}, first_sights_{0}, placed_{0},
      copied_out_{0}, arenas_made_{0};
};

}  // namespace seqrt::cpu
