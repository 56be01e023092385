// A run-time Loop of a backend list (Segment::control): the host counts the
// iterations and reads the condition, and the body, compiled as a graph of
// its own by the same backend list, runs its kernels on the device; only
// the body's inputs and outputs cross, never its captured weights.
#pragma once

#include <memory>

#include "backends/backend.h"

namespace seqrt {

// `segment` holds one Loop node; its inputs are M, cond, the initial
// carried values and what the body captures, its constants the captured
// weights. `list` is the backend list that compiles the body.
Result<std::unique_ptr<Executable>> compile_loop_on_host(
    const Graph& segment, Backend& list, const CompileOptions& options);

}  // namespace seqrt
