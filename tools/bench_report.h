// The parts of `seqrt bench`'s report: generated inputs, latency
// percentiles, throughput, peak memory and the per-op profile.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "backends/node_profiler.h"
#include "graph/graph.h"
#include "tools/human_bytes.h"

namespace seqrt {

// An input of `value`'s type with its symbolic dims from `bindings`:
// floats uniform in [-1, 1) (seeded), integers 0, booleans false. An error
// names the input and the dim when a symbol is not bound.
Result<Tensor> generated_input(const Value& value,
                               const std::map<std::string, int64_t>& bindings,
                               uint32_t seed);

// One line per fed input: type and where it came from.
void print_feeds(const Graph& graph, const std::map<std::string, Tensor>& feeds,
                 const std::vector<std::string>& file_specs);

// min, mean, p50, p90, p99, max of the run times (seconds).
void print_latency(std::vector<double> seconds);

// Runs per second, and tokens per second when the first integer input of
// rank >= 2 (token ids, batch x seq) says how many a run processes.
void print_throughput(const Graph& graph,
                      const std::map<std::string, Tensor>& feeds, size_t runs,
                      double total_seconds);

// The process's peak resident set so far (VmHWM).
int64_t peak_rss_bytes();

// `total` less `before` node by node (both from one profiler, graph order).
std::vector<NodeProfile> profile_difference(
    std::vector<NodeProfile> total, const std::vector<NodeProfile>& before);

// Kernel time per op (summed over its nodes) and the `top` slowest nodes,
// as a share of `wall_seconds`, the time of all profiled runs.
void print_profile(const std::vector<NodeProfile>& nodes, double wall_seconds,
                   int top);

}  // namespace seqrt
