// A run-time If of a backend list (Segment::control): the host reads the
// condition and runs the branch taken, each branch compiled once as a
// graph of its own by the same backend list, so its kernels run on the
// device and only the branch's inputs and outputs cross.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backends/backend.h"

namespace seqrt {

// `segment` holds one If node; its inputs are the condition and the values
// the branches capture, its constants the captured weights. `list` is the
// backend list that compiles each branch.
Result<std::unique_ptr<Executable>> compile_if_on_host(
    const Graph& segment, Backend& list, const CompileOptions& options);

// A subgraph of the one node of `segment` as a graph of its own, named
// `name`: what it captures becomes inputs after its own (their segment
// input indices appended to `fed`), or constants where the segment holds
// them, so weights never cross per run.
Result<Graph> standalone_subgraph(const Graph& segment, const Graph& subgraph,
                                  const std::string& name,
                                  std::vector<size_t>& fed);

// A subgraph's own placement report (`inner`), indented under "what: " in
// its If's or Loop's segment of the outer report.
std::string nested_report(const std::string& what, std::string inner);

}  // namespace seqrt
