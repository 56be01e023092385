// A run-time If of a backend list (Segment::control): the host reads the
// condition and runs the branch taken, each branch compiled once as a
// graph of its own by the same backend list, so its kernels run on the
// device and only the branch's inputs and outputs cross.
#pragma once

#include <memory>

#include "backends/backend.h"

namespace seqrt {

// `segment` holds one If node; its inputs are the condition and the values
// the branches capture, its constants the captured weights. `list` is the
// backend list that compiles each branch.
Result<std::unique_ptr<Executable>> compile_if_on_host(
    const Graph& segment, Backend& list, const CompileOptions& options);

}  // namespace seqrt
