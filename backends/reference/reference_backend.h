// The reference backend: runs a graph node by node with each op's reference
// kernel (ops/). It is the specification other backends are checked against,
// written for clarity, not speed.
#pragma once

#include <memory>

#include "backends/backend.h"

namespace seqrt {

std::unique_ptr<Backend> create_reference_backend();
// The keys create_reference_backend(options) takes: "device" (0 only).
const std::vector<BackendOptionSpec>& reference_backend_option_specs();
// The same, refusing options it does not take (an unknown key, a device
// other than 0) with an error naming them.
Result<std::unique_ptr<Backend>> create_reference_backend(
    const BackendOptions& options);

// Runs `graph` directly (no Backend object); used by the reference
// executable and by reference kernels that run subgraphs. `outer` holds
// values of enclosing graphs by name for captures.
Result<std::vector<Tensor>> run_reference_graph(
    const Graph& graph, std::vector<Tensor> inputs,
    const std::map<std::string, Tensor>* outer = nullptr);

}  // namespace seqrt
