#include "runtime/memory_budget.h"

#include <fmt/format.h>

#include "compiler/planner/bind_dims.h"  // bindings_to_string
#include "compiler/planner/memory_plan.h"

namespace seqrt {
namespace {

// Past this many bindings the cache starts over: a model fed ever new
// sequence lengths must not grow it without bound.
constexpr size_t kMaxEstimates = 64;

}  // namespace

int64_t constant_bytes(const Graph& graph) {
  int64_t total = 0;
  for (const auto& [id, tensor] : graph.constants) {
    total += static_cast<int64_t>(tensor.byte_size());
  }
  return total;
}

Result<int64_t> estimate_run_bytes(
    const Graph& graph, const std::map<std::string, int64_t>& bindings) {
  SEQRT_ASSIGN_OR_RETURN(MemoryPlan plan, plan_memory(graph, bindings));
  int64_t total = plan.peak_arena_bytes;
  for (const ValuePlan& value : plan.values) {
    // Views share their source's bytes; arena values are in the peak.
    if (value.alias_of != kNoValue || value.bytes <= 0) continue;
    if (value.kind == MemoryKind::kConstant || value.kind == MemoryKind::kIo ||
        value.kind == MemoryKind::kState) {
      total += value.bytes;
    }
  }
  return total;
}

Status MemoryBudget::check(int64_t bytes, const std::string& what) const {
  if (bytes <= budget_bytes_) return Status::ok();
  return limit_error(LimitKind::kMemoryBudgetBytes,
                     fmt::format("graph '{}': {}", graph_.name, what), bytes,
                     budget_bytes_);
}

Status MemoryBudget::check_compile(
    const std::map<std::string, int64_t>& bindings) const {
  if (budget_bytes_ <= 0) return Status::ok();
  Result<int64_t> estimate = estimate_run_bytes(graph_, bindings);
  if (estimate.is_ok()) return check(*estimate, "one run");
  return check(constant_bytes(graph_), "loading the weights");
}

Result<int64_t> MemoryBudget::check_run(
    const std::map<std::string, int64_t>& bound, int64_t fed_bytes) const {
  if (budget_bytes_ <= 0) return int64_t{0};
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto known = estimates_.find(bound);
    if (known != estimates_.end()) {
      SEQRT_RETURN_IF_ERROR(
          check(known->second,
                fmt::format("a run with {}", bindings_to_string(bound))));
      return known->second;
    }
  }
  Result<int64_t> planned = estimate_run_bytes(graph_, bound);
  int64_t bytes = 0;
  if (planned.is_ok()) {
    bytes = *planned;
  } else {
    bytes = constant_bytes(graph_) + fed_bytes;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (estimates_.size() >= kMaxEstimates) estimates_.clear();
    estimates_.emplace(bound, bytes);
  }
  SEQRT_RETURN_IF_ERROR(
      check(bytes, fmt::format("a run with {}", bindings_to_string(bound))));
  return bytes;
}

}  // namespace seqrt
