#include "backends/node_profiler.h"

#include <fmt/format.h>

namespace seqrt {

NodeProfiler::NodeProfiler(const Graph& graph)
    : nanoseconds_(new std::atomic<int64_t>[graph.nodes.size()]),
      calls_(new std::atomic<int64_t>[graph.nodes.size()]) {
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& node = graph.nodes[i];
    NodeProfile profile;
    profile.op = node.domain.empty() ? node.op : node.domain + "::" + node.op;
    profile.node =
        node.name.empty() ? fmt::format("{}#{}", node.op, i) : node.name;
    nodes_.push_back(std::move(profile));
    nanoseconds_[i] = 0;
    calls_[i] = 0;
  }
}

void NodeProfiler::record(int node, int64_t nanoseconds) {
  nanoseconds_[node].fetch_add(nanoseconds, std::memory_order_relaxed);
  calls_[node].fetch_add(1, std::memory_order_relaxed);
}

std::vector<NodeProfile> NodeProfiler::report() const {
  std::vector<NodeProfile> report = nodes_;
  for (size_t i = 0; i < report.size(); ++i) {
    report[i].calls = calls_[i].load(std::memory_order_relaxed);
    report[i].seconds =
        static_cast<double>(nanoseconds_[i].load(std::memory_order_relaxed)) *
        1e-9;
  }
  return report;
}

}  // namespace seqrt
