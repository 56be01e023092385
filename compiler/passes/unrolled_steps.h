// Finding a loop a tracer wrote out (fold_unrolled_loops): T copies of one
// step, copy t reading slice t of some tensors (a Gather with the constant
// index t) and the values the copy before it carried over. Internal to
// compiler/passes.
#pragma once

#include <optional>
#include <unordered_map>
#include <vector>

#include "graph/graph.h"

namespace seqrt {

// The tensor a loop slices, along `axis` (non-negative).
struct SlicedSource {
  ValueId source = kNoValue;
  int64_t axis = 0;
};

// A value carried from one step into the next: step t reads it at the
// positions where step 1 reads `read` (a value of step 0), and it is
// `carried` of step t-1 (a value of the template); `initial` is what step
// 0 reads there.
struct Carry {
  ValueId read = kNoValue;
  ValueId carried = kNoValue;
  ValueId initial = kNoValue;
};

// A value every step computes and one Concat stacks, in step order, along
// `axis` (where the value has size 1); the Concat's output is `stacked`.
struct StackedOutput {
  ValueId value = kNoValue;  // of the template
  int concat = -1;           // node index
  int64_t axis = 0;
  ValueId stacked = kNoValue;
};

struct UnrolledLoop {
  int64_t steps = 0;
  std::vector<SlicedSource> sources;
  std::vector<std::vector<int>> seeds;  // [source][t]: the Gather node
  // Step 1's nodes other than its Gathers, in dependency order: the body.
  std::vector<int> step_nodes;
  std::vector<Carry> carries;
  std::vector<StackedOutput> stacked;
  // For each carry, its value after the last step where something past the
  // loop reads it (else kNoValue).
  std::vector<ValueId> finals;
  // Every node the loop's copies and their stacking take.
  std::vector<int> all_nodes;
};

// The first loop of at least 3 steps written out in `graph` whose copies
// match node for node (same ops, attributes and values read from outside),
// whose values leave it only as carries, final values and stacked outputs,
// and whose sources are computed before it; nullopt when there is none.
std::optional<UnrolledLoop> find_unrolled_loop(const Graph& graph);

}  // namespace seqrt
