#include "compiler/partition/light_islands.h"

#include <fmt/format.h>

#include <set>

namespace seqrt {
namespace {

// The host target after `device` in order of preference, or -1.
int host_after(const std::vector<PartitionTarget>& targets, int device) {
  for (size_t t = device + 1; t < targets.size(); ++t) {
    if (targets[t].host_memory) return static_cast<int>(t);
  }
  return -1;
}

}  // namespace

bool is_heavy_op(const Node& node) {
  static const std::set<std::string> kHeavy = {
      "MatMul",        "Gemm",      "Conv",
      "ConvTranspose", "Einsum",    "MatMulInteger",
      "QLinearMatMul", "Attention", "LSTM",
      "GRU",           "RNN"};
  return node.domain == kSeqrtDomain || node.has_subgraphs() ||
         kHeavy.count(node.op) != 0;
}

std::map<int, std::string> light_islands(
    const Graph& graph, const std::vector<PartitionTarget>& targets,
    const Partition& partition,
    const std::function<bool(const Node&)>& is_parameter) {
  // Which segment writes each crossing value, and which read it.
  std::map<std::string, int> writer;
  std::map<std::string, std::vector<int>> readers;
  for (size_t s = 0; s < partition.segments.size(); ++s) {
    const Graph& g = partition.segments[s].graph;
    for (ValueId id : g.outputs) writer[g.value(id).name] = static_cast<int>(s);
    for (ValueId id : g.inputs) {
      readers[g.value(id).name].push_back(static_cast<int>(s));
    }
  }
  auto on_host = [&](int s) {
    return targets[partition.segments[s].target].host_memory;
  };
  std::map<int, std::string> moved;
  for (size_t s = 0; s < partition.segments.size(); ++s) {
    const Segment& segment = partition.segments[s];
    if (targets[segment.target].host_memory) continue;
    const int host = host_after(targets, segment.target);
    if (host < 0) continue;
    const Graph& g = segment.graph;
    bool island = true, next_to_host = false;
    for (ValueId id : g.inputs) {
      auto it = writer.find(g.value(id).name);
      if (it == writer.end()) continue;  // a graph input
      island = island && on_host(it->second);
      next_to_host = true;
    }
    for (ValueId id : g.outputs) {
      for (int r : readers[g.value(id).name]) {
        island = island && on_host(r);
        next_to_host = true;
      }
    }
    if (!island || !next_to_host) continue;
    bool light = true;
    for (int n : segment.nodes) {
      light = light && !is_heavy_op(graph.nodes[n]) &&
              !is_parameter(graph.nodes[n]) &&
              targets[host].supports(graph, graph.nodes[n]).is_ok();
    }
    if (!light) continue;
    for (int n : segment.nodes) {
      moved[n] = fmt::format(
          "{}: moved to {}: its segment on {} lies between {} segments and "
          "holds only light ops, so copying its values there and back would "
          "cost more than running it on {}",
          graph.nodes[n].label(), targets[host].name,
          targets[segment.target].name, targets[host].name, targets[host].name);
    }
  }
  return moved;
}

}  // namespace seqrt
