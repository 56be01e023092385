// Heterogeneous execution: a backend made of several in order of
// preference ("vulkan,cpu"). Its compile partitions the graph by what each
// backend supports (compiler/partition/partition.h), compiles each segment
// with its own backend and runs the segments in order, handing values
// across as host tensors: a segment on a device backend copies its inputs
// in and its outputs out inside its own run, and holds the weights it
// reads from compile on, so weights never cross per run. Created by
// create_backend() for a name with a comma.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backends/backend.h"

namespace seqrt {

// "vulkan,cpu" -> {"vulkan", "cpu"}; kInvalidArgument for an empty list,
// an empty name or a name given twice.
Result<std::vector<std::string>> parse_backend_list(const std::string& list);

// The backends of `list`, created in order: keys of `options` without a
// backend go to the first (the device backend a list usually starts with),
// BACKEND.KEY ones (BackendOptions::per_backend) to the backend named.
Result<std::unique_ptr<Backend>> create_multi_backend(
    const std::string& list, const BackendOptions& options);

}  // namespace seqrt
