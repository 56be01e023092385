// The CPU backend's one table from ops to kernels (STYLE.md rule 2). Each
// kernel family registers itself through kernels/kernel_list.def.
#pragma once

#include <functional>
#include <string>

#include "backends/host/interpreter.h"
#include "backends/kernel_table.h"
#include "graph/graph.h"

namespace seqrt::cpu {

struct CpuKernel {
  std::string domain;  // kOnnxDomain or kSeqrtDomain
  std::string op;
  KernelFn run;  // same contract as the op's reference kernel
  // Null: the kernel handles every node that passes the op's schema.
  // Otherwise kUnsupported saying which attribute/dtype it lacks.
  std::function<Status(const Graph& graph, const Node& node)> supports;
  // Optional: called once per node when a graph is compiled, to build what
  // every run of the node shares (oneDNN primitives, constant weights
  // reordered into the layout they want). Returns the function that runs
  // the node from then on. Null: `run` is used as it is.
  std::function<Result<KernelFn>(const Graph& graph, const Node& node)> prepare;
};

using KernelTable = seqrt::KernelTable<CpuKernel>;

const KernelTable& kernel_table();

}  // namespace seqrt::cpu
