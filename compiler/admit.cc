#include "compiler/admit.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace seqrt {
namespace {

void collect(const Graph& graph, const NodeSupport& supports,
             Subgraphs subgraphs, std::vector<std::string>& lines) {
  for (const Node& node : graph.nodes) {
    Status status = supports(graph, node);
    if (!status.is_ok()) lines.push_back(status.message());
    if (subgraphs == Subgraphs::kSkip) continue;
    for (const auto& [name, attr] : node.attrs) {
      if (attr.type() == AttrType::kGraph) {
        collect(*attr.as_graph(), supports, subgraphs, lines);
      }
    }
  }
}

}  // namespace

std::vector<std::string> unsupported_nodes(const Graph& graph,
                                           const NodeSupport& supports,
                                           Subgraphs subgraphs) {
  std::vector<std::string> lines;
  collect(graph, supports, subgraphs, lines);
  return lines;
}

Status require_supported(const Graph& graph, std::string_view who,
                         const NodeSupport& supports, Subgraphs subgraphs) {
  std::vector<std::string> lines =
      unsupported_nodes(graph, supports, subgraphs);
  if (lines.empty()) return Status::ok();
  return unsupported("{} cannot run {} node(s): {}", who, lines.size(),
                     fmt::join(lines, "; "));
}

}  // namespace seqrt
