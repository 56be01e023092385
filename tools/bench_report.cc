#include "tools/bench_report.h"

#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include <fmt/format.h>

namespace seqrt {
namespace {

// The value at fraction q of the sorted run times (nearest rank).
double percentile(const std::vector<double>& sorted, double q) {
  size_t rank = static_cast<size_t>(std::ceil(q * sorted.size()));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

std::string ms(double seconds) { return fmt::format("{:.3f}", 1e3 * seconds); }

const Tensor* token_ids(const Graph& graph,
                        const std::map<std::string, Tensor>& feeds) {
  for (ValueId id : graph.inputs) {
    auto it = feeds.find(graph.value(id).name);
    if (it == feeds.end()) continue;
    DType dtype = it->second.dtype();
    if ((dtype == DType::kI64 || dtype == DType::kI32) &&
        it->second.dims().size() >= 2) {
      return &it->second;
    }
  }
  return nullptr;
}

}  // namespace

Result<Tensor> generated_input(const Value& value,
                               const std::map<std::string, int64_t>& bindings,
                               uint32_t seed) {
  if (!value.shape) {
    return invalid_argument(
        "input '{}' has no known rank: give it with --input {}=PATH",
        value.name, value.name);
  }
  std::vector<int64_t> dims;
  for (size_t axis = 0; axis < value.shape->rank(); ++axis) {
    const Dim& dim = (*value.shape)[axis];
    if (dim.is_fixed()) {
      dims.push_back(dim.value());
      continue;
    }
    auto it = bindings.find(dim.symbol_name());
    if (dim.is_unknown() || it == bindings.end()) {
      return invalid_argument(
          "input '{}' axis {} is '{}': give its size with --bind {}=SIZE, "
          "or the input with --input {}=PATH",
          value.name, axis, dim.to_string(), dim.to_string(), value.name);
    }
    dims.push_back(it->second);
  }
  SEQRT_ASSIGN_OR_RETURN(Tensor tensor, Tensor::allocate(value.dtype, dims));
  if (is_float(value.dtype)) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> uniform(-1.0, 1.0);
    for (int64_t i = 0; i < tensor.num_elements(); ++i) {
      tensor.set_element_f64(i, uniform(rng));
    }
  }
  return tensor;
}

void print_feeds(const Graph& graph, const std::map<std::string, Tensor>& feeds,
                 const std::vector<std::string>& file_specs) {
  fmt::print("inputs:\n");
  for (ValueId id : graph.inputs) {
    const std::string& name = graph.value(id).name;
    auto it = feeds.find(name);
    if (it == feeds.end()) {
      fmt::print("  {}: state, from its initial value\n", name);
      continue;
    }
    bool from_file = std::any_of(file_specs.begin(), file_specs.end(),
                                 [&](const std::string& spec) {
                                   return spec.rfind(name + "=", 0) == 0;
                                 });
    fmt::print("  {}: {} {}, {}\n", name, dtype_name(it->second.dtype()),
               dims_to_string(it->second.dims()),
               from_file ? "from file" : "generated");
  }
}

void print_latency(std::vector<double> seconds) {
  std::sort(seconds.begin(), seconds.end());
  double mean = std::accumulate(seconds.begin(), seconds.end(), 0.0) /
                static_cast<double>(seconds.size());
  fmt::print(
      "latency over {} runs (ms): min {}  mean {}  p50 {}  p90 {}  p99 {}  "
      "max {}\n",
      seconds.size(), ms(seconds.front()), ms(mean),
      ms(percentile(seconds, .5)), ms(percentile(seconds, .9)),
      ms(percentile(seconds, .99)), ms(seconds.back()));
}

void print_throughput(const Graph& graph,
                      const std::map<std::string, Tensor>& feeds, size_t runs,
                      double total_seconds) {
  double per_second = static_cast<double>(runs) / total_seconds;
  fmt::print("throughput: {:.2f} runs/s", per_second);
  if (const Tensor* tokens = token_ids(graph, feeds)) {
    fmt::print(", {:.1f} tokens/s ({} tokens per run)",
               per_second * static_cast<double>(tokens->num_elements()),
               tokens->num_elements());
  }
  fmt::print("\n");
}

int64_t peak_rss_bytes() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;  // Linux: KiB
}

std::vector<NodeProfile> profile_difference(
    std::vector<NodeProfile> total, const std::vector<NodeProfile>& before) {
  for (size_t i = 0; i < total.size() && i < before.size(); ++i) {
    total[i].calls -= before[i].calls;
    total[i].seconds -= before[i].seconds;
  }
  return total;
}

void print_profile(const std::vector<NodeProfile>& nodes, double wall_seconds,
                   int top) {
  struct OpTotal {
    double seconds = 0;
    int64_t calls = 0;
    int nodes = 0;
  };
  std::map<std::string, OpTotal> ops;
  double kernel_seconds = 0;
  for (const NodeProfile& node : nodes) {
    OpTotal& total = ops[node.op];
    total.seconds += node.seconds;
    total.calls += node.calls;
    ++total.nodes;
    kernel_seconds += node.seconds;
  }
  std::vector<std::pair<std::string, OpTotal>> by_time(ops.begin(), ops.end());
  std::stable_sort(by_time.begin(), by_time.end(),
                   [](const auto& a, const auto& b) {
                     return a.second.seconds > b.second.seconds;
                   });
  auto share = [&](double seconds) {
    return wall_seconds > 0 ? 100.0 * seconds / wall_seconds : 0.0;
  };
  fmt::print("\nprofile: kernels {:.1f}% of the run time ({} ms of {} ms)\n",
             share(kernel_seconds), ms(kernel_seconds), ms(wall_seconds));
  fmt::print("  {:<32} {:>6} {:>8} {:>12} {:>7}\n", "op", "nodes", "calls",
             "total ms", "share");
  for (const auto& [op, total] : by_time) {
    fmt::print("  {:<32} {:>6} {:>8} {:>12} {:>6.1f}%\n", op, total.nodes,
               total.calls, ms(total.seconds), share(total.seconds));
  }
  std::vector<NodeProfile> slowest = nodes;
  std::stable_sort(slowest.begin(), slowest.end(),
                   [](const NodeProfile& a, const NodeProfile& b) {
                     return a.seconds > b.seconds;
                   });
  slowest.resize(std::min<size_t>(slowest.size(), std::max(top, 0)));
  fmt::print("slowest nodes:\n  {:<40} {:<24} {:>12} {:>7}\n", "node", "op",
             "ms per call", "share");
  for (const NodeProfile& node : slowest) {
    double per_call = node.calls > 0 ? node.seconds / node.calls : 0;
    fmt::print("  {:<40} {:<24} {:>12} {:>6.1f}%\n", node.node, node.op,
               ms(per_call), share(node.seconds));
  }
}

}  // namespace seqrt
