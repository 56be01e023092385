#include "tools/inspect_plan.h"

#include <algorithm>
#include <cstdint>
#include <map>

#include <fmt/format.h>

#include "compiler/passes/pass.h"
#include "compiler/planner/memory_plan.h"
#include "tools/input_files.h"

namespace seqrt {
namespace {

std::string type_text(const ValuePlan& value) {
  if (value.bytes < 0) {
    return fmt::format("{} (run-time size)", dtype_name(value.dtype));
  }
  std::vector<std::string> dims;
  for (int64_t dim : value.dims) dims.push_back(std::to_string(dim));
  return fmt::format("{} ({})", dtype_name(value.dtype), fmt::join(dims, ","));
}

std::string alias_text(const Graph& graph, const ValuePlan& value) {
  if (value.alias_of == kNoValue) return "";
  return fmt::format("{} '{}'", value.in_place ? "in place of" : "view of",
                     graph.value(value.alias_of).name);
}

void print_plan_table(const Graph& graph, const MemoryPlan& plan) {
  fmt::print("  {:<32} {:<8} {:>12} {:>12}  {:<20} {}\n", "value", "kind",
             "offset", "bytes", "type", "shares");
  for (size_t id = 0; id < plan.values.size(); ++id) {
    const ValuePlan& value = plan.values[id];
    if (value.kind == MemoryKind::kUnused) continue;
    const std::string offset =
        value.kind == MemoryKind::kArena ? std::to_string(value.offset) : "-";
    std::string row =
        fmt::format("  {:<32} {:<8} {:>12} {:>12}  {:<20} {}",
                    graph.values[id].name, memory_kind_name(value.kind), offset,
                    value.bytes < 0 ? "?" : std::to_string(value.bytes),
                    type_text(value), alias_text(graph, value));
    row.erase(row.find_last_not_of(' ') + 1);
    fmt::print("{}\n", row);
  }
}

}  // namespace

Status print_memory_plan(const Graph& graph,
                         const std::vector<std::string>& bindings) {
  SEQRT_ASSIGN_OR_RETURN(auto dims, parse_bindings(bindings));
  Graph optimized = graph;
  SEQRT_RETURN_IF_ERROR(optimize_graph(optimized).status());
  Result<MemoryPlan> plan = plan_memory(optimized, dims);
  if (!plan.is_ok()) {
    return plan.status().with_context(
        "planning memory (bind symbolic dims with --bind NAME=SIZE)");
  }
  SEQRT_RETURN_IF_ERROR(validate_plan(optimized, *plan));
  fmt::print("\nmemory plan of the optimised graph ({} nodes, {} values):\n",
             optimized.nodes.size(), plan->values.size());
  print_plan_table(optimized, *plan);
  const double percent = plan->naive_arena_bytes == 0
                             ? 100.0
                             : 100.0 *
                                   static_cast<double>(plan->peak_arena_bytes) /
                                   static_cast<double>(plan->naive_arena_bytes);
  fmt::print("peak arena: {} bytes; naive sum: {} bytes ({:.1f}% of it)\n",
             plan->peak_arena_bytes, plan->naive_arena_bytes, percent);
  const auto dynamic = std::count_if(
      plan->values.begin(), plan->values.end(), [](const ValuePlan& value) {
        return value.kind == MemoryKind::kDynamic;
      });
  fmt::print("dynamic values (sized at run time, on the heap): {}\n", dynamic);
  return Status::ok();
}

}  // namespace seqrt
