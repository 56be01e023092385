// The CUDA backend's one table from ops to kernels (STYLE.md rule 2), and
// its list of what it lacks. Each entry stages the node's tensors through
// NodeIo and launches device code from kernels/.
#pragma once

#include <functional>
#include <string>

#include "backends/cuda/cuda_context.h"
#include "graph/graph.h"
#include "ops/op_context.h"

namespace seqrt::cuda {

struct CudaKernel {
  const char* domain;
  const char* op;
  // Ok, or kUnsupported naming the attribute, dtype or shape it lacks.
  std::function<Status(const Graph& graph, const Node& node)> supports;
  std::function<Status(KernelContext& ctx, CudaContext& cuda)> run;
};

// Null when the op has no CUDA kernel.
const CudaKernel* find_cuda_kernel(const std::string& domain,
                                   const std::string& op);

// Ok when a node runs on its CUDA kernel, else kUnsupported naming the
// node and what it lacks. Subgraphs run only as RungeKutta bodies, whose
// nodes its kernel checks with this.
Status cuda_node_supported(const Graph& graph, const Node& node);

}  // namespace seqrt::cuda
