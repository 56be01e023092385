// State pairs of an imported model (DESIGN.md §4): a graph input holding
// state before a call and the graph output holding it after.
#pragma once

#include "graph/graph.h"
#include "graph/status.h"

namespace seqrt {

// Metadata key listing pairs explicitly: "past_a:present_a;past_b:present_b".
inline constexpr const char* kStatePairsKey = "seqrt.state_pairs";

// Fills graph.state_pairs from the kStatePairsKey metadata entry when
// present (a name that is not a graph input / output is an error), else by
// naming: an input `past<rest>` pairs with an output `present<rest>`, and
// `past_key_values<rest>` with `present<rest>`, when dtype and rank agree.
Status detect_state_pairs(Graph& graph);

}  // namespace seqrt
