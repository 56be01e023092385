// Slices the planner may give no memory of their own: a Slice whose output
// is one contiguous run of its input's row-major bytes reads as a view of
// the input at a byte offset (DESIGN.md §5.1, "slices as views").
#pragma once

#include <cstdint>
#include <optional>

#include "graph/graph.h"
#include "compiler/planner/memory_plan.h"

namespace seqrt {

// The byte offset of `node`'s output inside its input 0 when `node` is a
// Slice whose starts, ends, axes and steps are constants of `graph` and
// whose output (`out`, typed under the plan's bindings) is a contiguous,
// non-empty run of the input (`in`): every axis of more than one element is
// taken with step 1 and every axis after it whole. nullopt otherwise.
std::optional<int64_t> slice_view_offset(const Graph& graph, const Node& node,
                                         const ValuePlan& in,
                                         const ValuePlan& out);

}  // namespace seqrt
