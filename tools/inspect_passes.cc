#include "tools/inspect_passes.h"

#include <vector>

#include <fmt/format.h>

#include "compiler/passes/pass.h"
#include "graph/printer.h"

namespace seqrt {

Status print_passes(const Graph& graph) {
  Graph optimized = graph;
  SEQRT_ASSIGN_OR_RETURN(std::vector<PassStats> stats,
                         optimize_graph(optimized));
  fmt::print("\ngraph before passes ({} nodes):\n{}", graph.nodes.size(),
             print_graph(graph));
  fmt::print("\npasses:\n{}", format_pass_stats(stats));
  fmt::print("\ngraph after passes ({} nodes):\n{}", optimized.nodes.size(),
             print_graph(optimized));
  return Status::ok();
}

}  // namespace seqrt
