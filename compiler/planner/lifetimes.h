// What the planner and its validator both derive from the graph alone: each
// value's memory kind and the schedule steps during which it is alive.
#pragma once

#include <vector>

#include "graph/graph.h"
#include "compiler/planner/memory_plan.h"

namespace seqrt {

// Constant, state (either side of a state pair), io (graph input or
// output), arena (produced by a node) or unused. Fails on a value a node
// reads that nothing provides.
Result<std::vector<MemoryKind>> base_value_kinds(const Graph& graph);

struct Lifetime {
  int first = 0;  // step of the producer; 0 for inputs and constants
  int last = 0;   // step of the last reader; the producer's when none
};

// Lifetimes over `schedule` (node indices, one step each). A node reads its
// inputs and every enclosing value its subgraphs capture, so a capture lives
// until the node holding the subgraph ends. Graph outputs live to the end.
// Fails when `schedule` is not a dependency order of every node.
Result<std::vector<Lifetime>> value_lifetimes(const Graph& graph,
                                              const std::vector<int>& schedule);

// The end of an alias chain: the value that owns the memory.
ValueId alias_root(const MemoryPlan& plan, ValueId id);

inline int64_t align_arena(int64_t bytes) {
  return (bytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
}

}  // namespace seqrt
