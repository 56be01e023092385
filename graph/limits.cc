#include "graph/limits.h"

#include <iterator>

#include <fmt/format.h>

namespace seqrt {
namespace {

std::string amount_text(LimitKind kind, int64_t amount) {
  switch (kind) {
    case LimitKind::kMaxTensorElements:
      return fmt::format("{} elements", amount);
    case LimitKind::kMaxNodes:
      return fmt::format("{} nodes", amount);
    case LimitKind::kMaxSubgraphDepth:
      return fmt::format("{} subgraph levels", amount);
    case LimitKind::kMaxLoopIterations:
      return fmt::format("{} iterations", amount);
    case LimitKind::kRunTimeoutMs:
      return fmt::format("{} ms", amount);
    default:
      return format_bytes(amount);
  }
}

struct GraphSize {
  int64_t nodes = 0;
  int64_t depth = 0;  // deepest subgraph level; the graph itself is 0
};

// Walks the subgraphs; the depth stops growing past `stop`, so a graph
// that skipped the verifier cannot recurse without bound.
void measure(const Graph& graph, int64_t depth, int64_t stop, GraphSize& size) {
  size.nodes += static_cast<int64_t>(graph.nodes.size());
  if (depth > size.depth) size.depth = depth;
  if (depth >= stop) return;
  for (const Node& node : graph.nodes) {
    for (const auto& [name, attr] : node.attrs) {
      if (attr.type() == AttrType::kGraph && attr.as_graph() != nullptr) {
        measure(*attr.as_graph(), depth + 1, stop, size);
      }
    }
  }
}

}  // namespace

const char* limit_name(LimitKind kind) {
  switch (kind) {
    case LimitKind::kMaxTensorBytes:
      return "max_tensor_bytes";
    case LimitKind::kMaxTensorElements:
      return "max_tensor_elements";
    case LimitKind::kMaxNodes:
      return "max_nodes";
    case LimitKind::kMaxSubgraphDepth:
      return "max_subgraph_depth";
    case LimitKind::kMemoryBudgetBytes:
      return "memory_budget";
    case LimitKind::kMaxLoopIterations:
      return "max_loop_iterations";
    case LimitKind::kRunTimeoutMs:
      return "run_timeout_ms";
  }
  return "unknown limit";
}

const char* limit_flag(LimitKind kind) {
  switch (kind) {
    case LimitKind::kMaxTensorBytes:
      return "--max-tensor-bytes";
    case LimitKind::kMaxTensorElements:
      return "--max-tensor-elements";
    case LimitKind::kMaxNodes:
      return "--max-nodes";
    case LimitKind::kMaxSubgraphDepth:
      return "--max-subgraph-depth";
    case LimitKind::kMemoryBudgetBytes:
      return "--memory-budget";
    case LimitKind::kMaxLoopIterations:
      return "--max-loop-iterations";
    case LimitKind::kRunTimeoutMs:
      return "--timeout";
  }
  return "--unknown-limit";
}

Status set_limit(Limits& limits, LimitKind kind, int64_t value) {
  const int64_t minimum =
      kind == LimitKind::kMemoryBudgetBytes || kind == LimitKind::kRunTimeoutMs
          ? 0
          : 1;
  if (value < minimum) {
    return invalid_argument("{} must be at least {}, got {}", limit_name(kind),
                            minimum, value);
  }
  switch (kind) {
    case LimitKind::kMaxTensorBytes:
      limits.max_tensor_bytes = value;
      break;
    case LimitKind::kMaxTensorElements:
      if (value > kMaxElements) {
        return invalid_argument(
            "max_tensor_elements may be at most 2^48 ({}), got {}",
            kMaxElements, value);
      }
      limits.max_tensor_elements = value;
      break;
    case LimitKind::kMaxNodes:
      limits.max_nodes = value;
      break;
    case LimitKind::kMaxSubgraphDepth:
      if (value > kMaxSubgraphDepth) {
        return invalid_argument(
            "max_subgraph_depth may be at most {} (the loaders' bound), got {}",
            kMaxSubgraphDepth, value);
      }
      limits.max_subgraph_depth = value;
      break;
    case LimitKind::kMemoryBudgetBytes:
      limits.memory_budget_bytes = value;
      break;
    case LimitKind::kMaxLoopIterations:
      limits.max_loop_iterations = value;
      break;
    case LimitKind::kRunTimeoutMs:
      limits.run_timeout_ms = value;
      break;
  }
  return Status::ok();
}

Status limit_error(LimitKind kind, const std::string& subject, int64_t amount,
                   int64_t limit) {
  return make_error(StatusCode::kLimitExceeded,
                    "{} needs {}, above {} ({}); raise it with {} / "
                    "SessionOptions::limits",
                    subject, amount_text(kind, amount), limit_name(kind),
                    amount_text(kind, limit), limit_flag(kind));
}

Status check_tensor_limits(const std::string& subject, DType dtype,
                           const std::vector<int64_t>& dims,
                           const Limits& limits) {
  SEQRT_ASSIGN_OR_RETURN(int64_t count, checked_num_elements(dims));
  if (count > limits.max_tensor_elements) {
    return limit_error(
        LimitKind::kMaxTensorElements,
        fmt::format("{} of shape {}", subject, dims_to_string(dims)), count,
        limits.max_tensor_elements);
  }
  // count <= kMaxElements (2^48) and elements are at most 8 bytes.
  const int64_t bytes =
      static_cast<int64_t>(dtype_bytes(dtype, static_cast<size_t>(count)));
  if (bytes > limits.max_tensor_bytes) {
    return limit_error(LimitKind::kMaxTensorBytes, subject, bytes,
                       limits.max_tensor_bytes);
  }
  return Status::ok();
}

Status check_graph_limits(const Graph& graph, const Limits& limits,
                          const std::string& source) {
  GraphSize size;
  measure(graph, 0, limits.max_subgraph_depth + 1, size);
  if (size.depth > limits.max_subgraph_depth) {
    return limit_error(LimitKind::kMaxSubgraphDepth,
                       fmt::format("{}: the graph", source), size.depth,
                       limits.max_subgraph_depth);
  }
  if (size.nodes > limits.max_nodes) {
    return limit_error(LimitKind::kMaxNodes,
                       fmt::format("{}: the graph", source), size.nodes,
                       limits.max_nodes);
  }
  for (const auto& [id, tensor] : graph.constants) {
    SEQRT_RETURN_IF_ERROR(check_tensor_limits(
        fmt::format("{}: tensor '{}'", source, graph.value(id).name),
        tensor.dtype(), tensor.dims(), limits));
  }
  for (const Value& value : graph.values) {
    if (!value.shape || !value.shape->is_fixed() ||
        value.dtype == DType::kUndefined) {
      continue;
    }
    SEQRT_RETURN_IF_ERROR(
        check_tensor_limits(fmt::format("{}: tensor '{}'", source, value.name),
                            value.dtype, value.shape->fixed_dims(), limits));
  }
  return Status::ok();
}

std::string format_bytes(int64_t bytes) {
  constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  while (value >= 1024 && unit + 1 < std::size(kUnits)) {
    value /= 1024;
    ++unit;
  }
  return unit == 0 ? fmt::format("{} B", bytes)
                   : fmt::format("{:.1f} {}", value, kUnits[unit]);
}

}  // namespace seqrt
