// Concrete types for planning: symbolic dims replaced by their bindings and
// every value's type inferred again, so that sizes computed from bound dims
// (including shape arithmetic feeding Reshape) become numbers.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace seqrt {

// A copy of `graph` whose top-level value shapes have each bound symbol
// replaced by its value, then typed by infer_graph. With `computed`, also
// the small node outputs that inference evaluated (infer_graph_values).
// `input_values` are graph inputs whose data is known too (parameters a
// device backend reads on the host before recording): inference sees them
// as constants, so the sizes and values made from them become numbers.
Result<Graph> bind_dims(const Graph& graph,
                        const std::map<std::string, int64_t>& bindings,
                        std::map<ValueId, Tensor>* computed = nullptr,
                        const std::map<ValueId, Tensor>& input_values = {});

// The sizes of the symbolic dims of `graph`'s inputs as `inputs` (in
// graph-input order) have them; an input of another rank is skipped (the
// run's input check reports it).
std::map<std::string, int64_t> bindings_from_inputs(
    const Graph& graph, const std::vector<Tensor>& inputs);

// "{batch=1, seq=8}"
std::string bindings_to_string(const std::map<std::string, int64_t>& bindings);

// True when the size of `value` (in a bound graph) is known only at run
// time: its dtype, its rank or a dim that inference could not follow is
// unknown, as for data-dependent shapes. A symbol left unbound is not that:
// binding it gives the size, so concrete_dims reports it instead.
bool known_only_at_run_time(const Value& value);

// The dims of `value` in a bound graph, or an error naming the value (and
// `producer`, when not null) when its dtype or a dim is still unknown.
Result<std::vector<int64_t>> concrete_dims(
    const Value& value, const Node* producer,
    const std::map<std::string, int64_t>& bindings);

}  // namespace seqrt
