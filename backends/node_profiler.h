// Per-node kernel time of a graph's top-level nodes, summed over runs, for
// `seqrt bench --profile` and CompileOptions::profile. A node holding a
// subgraph (If, Loop, Scan, RungeKutta) counts the time of its whole body.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace seqrt {

struct NodeProfile {
  std::string node;  // the node's name, or "<op>#<index>" when it has none
  std::string op;    // "MatMul", "seqrt::SelectiveScan"
  int64_t calls = 0;
  double seconds = 0;  // summed over calls
};

// Safe to record into from several runs at once (relaxed atomics: the
// totals are read after the runs end).
class NodeProfiler {
 public:
  explicit NodeProfiler(const Graph& graph);

  void record(int node, int64_t nanoseconds);
  // Every node in graph order, including those never run (calls 0).
  std::vector<NodeProfile> report() const;

 private:
  std::vector<NodeProfile> nodes_;  // names and ops; counts live below
  std::unique_ptr<std::atomic<int64_t>[]> nanoseconds_;
  std::unique_ptr<std::atomic<int64_t>[]> calls_;
};

}  // namespace seqrt
