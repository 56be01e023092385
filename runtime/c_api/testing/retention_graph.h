// The C API tests' model as an internal Graph, for tests of the C++ runtime
// (runtime/concurrency_test.cc) that run the same model: y = x +
// Retention(x Wq, x Wk, x Wv, past_state), x f32 (1, 2, seq, 4), one state
// pair past_state -> present_state. Kept apart from test_models.h, which
// includes only the public API.
#pragma once

#include "graph/graph.h"
#include "graph/status.h"

namespace seqrt {

Result<Graph> build_retention_test_graph();

}  // namespace seqrt
