// The graph-level memory plan (DESIGN.md §5.1): for one binding of a
// graph's symbolic dims, where every value lives. Transient values share one
// arena, placed by their lifetimes over the fixed topological schedule;
// elementwise ops may write into a dying input (in place) and reshape-like
// ops alias their input (views). See README.md for the algorithm.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "graph/graph.h"

namespace seqrt {

enum class MemoryKind {
  kUnused,       // a value no node, input, output or constant refers to
  kArena,        // transient: at `offset` in the run's arena
  kState,        // a state pair's input or output: owned by the Stream
  kIo,           // a graph input or output: bound by the caller
  kConstant,     // a weight
  kDynamic,      // a node's output whose size is known only at run time (a
                 // data-dependent shape): allocated on the heap when produced
  kPrecomputed,  // a node's output the binding fixes (shape arithmetic such
                 // as Shape -> Gather -> Concat): computed when the plan is
                 // made, in MemoryPlan::precomputed
};

const char* memory_kind_name(MemoryKind kind);  // "arena", "state", ...

// Arena offsets and block sizes are multiples of this.
inline constexpr int64_t kArenaAlignment = 64;

struct ValuePlan {
  MemoryKind kind = MemoryKind::kUnused;
  DType dtype = DType::kUndefined;
  std::vector<int64_t> dims;  // concrete, under the plan's dim bindings
  // dims x dtype size, unaligned; -1 (and no dims) when the size is known
  // only at run time: a kDynamic value, or an io or state value of that kind.
  int64_t bytes = 0;
  // Arena values only: the byte address in the arena. A multiple of
  // kArenaAlignment except for a slice view, which sits inside its input.
  int64_t offset = -1;
  // The value whose memory this one reuses: the input of a view op (a
  // reshape-like op, or a Slice that is one contiguous run of its input),
  // or the dying input an elementwise op overwrites (in_place). kNoValue
  // for none. A view of a non-arena value takes that value's kind.
  ValueId alias_of = kNoValue;
  bool in_place = false;
  // Schedule steps (positions in `schedule`) of the producer and of the
  // last reader; inputs and constants start at step 0.
  int first_step = 0;
  int last_step = 0;
};

struct MemoryPlan {
  std::map<std::string, int64_t> dim_bindings;
  std::vector<int> schedule;      // node indices, graph.topological_order()
  std::vector<ValuePlan> values;  // indexed by ValueId
  int64_t peak_arena_bytes = 0;   // the arena size a run needs
  int64_t naive_arena_bytes = 0;  // every arena value in its own block
  // The kPrecomputed values, and by node index whether a node produces only
  // such values: a run takes the tensors and skips those nodes, so the
  // shape arithmetic of an export runs once per binding, not once per run.
  std::vector<std::pair<ValueId, Tensor>> precomputed;
  std::vector<bool> precomputed_nodes;
};

// Plans `graph` with its symbolic dims bound. A value whose size inference
// cannot tell before run time (a data-dependent shape) is kDynamic, and so
// are views of it; every other value must get a concrete size from the
// bindings and the ops' inference, and an error names the first value with
// a symbol left unbound. Node outputs that inference computes from the
// constants and the bound shapes alone (small values, see infer_graph_values)
// are kPrecomputed. Subgraphs are opaque: the values they capture live
// until the node holding them ends. `input_values`: graph inputs whose data
// is known when planning (bind_dims); they stay kIo, and what inference
// computes from them is kPrecomputed like shape arithmetic.
Result<MemoryPlan> plan_memory(
    const Graph& graph, const std::map<std::string, int64_t>& dim_bindings,
    const std::map<ValueId, Tensor>& input_values = {});

// Checks a plan against its graph: kinds, sizes and lifetimes as the graph
// implies; every alias declared by a view or elementwise op that may take
// it; no two arena values alive at the same step share a byte unless one
// aliases the other, and no in-place write clobbers a value read later;
// every block inside the peak; peak <= naive sum.
Status validate_plan(const Graph& graph, const MemoryPlan& plan);

}  // namespace seqrt
