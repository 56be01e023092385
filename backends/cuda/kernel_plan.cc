#include "backends/cuda/kernel_plan.h"

#include <fmt/format.h>

#include "graph/dim_expr.h"
#include "ops/sequence/attention.h"
#include "ops/sequence/linear_attention.h"
#include "ops/sequence/neural_memory.h"
#include "ops/sequence/retention.h"
#include "ops/sequence/selective_scan.h"
#include "ops/sequence/ssd.h"

namespace seqrt::cuda {
namespace {

// A node's input shapes as sizes, symbolic dims bound.
class NodeDims {
 public:
  NodeDims(const Graph& graph, const Node& node,
           const std::map<std::string, int64_t>& bindings)
      : graph_(graph), node_(node), bindings_(bindings) {}

  bool has(size_t i) const {
    return i < node_.inputs.size() && node_.inputs[i] != kNoValue;
  }

  // Dim `axis` of input i.
  Result<int64_t> dim(size_t i, size_t axis) const {
    const std::optional<Shape>& shape = graph_.value(node_.inputs[i]).shape;
    if (!shape.has_value() || axis >= shape->rank()) {
      return invalid_argument("input {} has no known dim {}", i, axis);
    }
    const Dim& d = (*shape)[axis];
    if (d.is_fixed()) return d.value();
    if (d.is_symbol()) {
      if (std::optional<int64_t> size = bound_size(d)) return *size;
      const std::string atom = dim_atoms(d).front();
      return invalid_argument("bind the symbolic dim '{}' (--bind {}=SIZE)",
                              atom, atom);
    }
    return invalid_argument("input {} dim {} is unknown", i, axis);
  }

  // The types of the node's first `count` inputs for an op's contract
  // check, symbolic dims replaced by their bound sizes where bound.
  KernelInputTypes types(size_t count) const {
    KernelInputTypes types;
    for (size_t i = 0; i < count; ++i) {
      if (!has(i)) {
        types.shapes.push_back(std::nullopt);
        types.dtypes.push_back(DType::kUndefined);
        continue;
      }
      const Value& value = graph_.value(node_.inputs[i]);
      std::optional<Shape> shape = value.shape;
      if (shape.has_value()) {
        for (Dim& dim : shape->dims()) {
          if (!dim.is_symbol()) continue;
          if (std::optional<int64_t> size = bound_size(dim)) dim = Dim(*size);
        }
      }
      types.shapes.push_back(std::move(shape));
      types.dtypes.push_back(value.dtype);
    }
    return types;
  }

  // Ok when every size the plan needs is known; else names an unbound
  // symbolic dim of the inputs.
  Status require_known(const KernelInputTypes& types,
                       std::initializer_list<int64_t> sizes) const {
    for (int64_t size : sizes) {
      if (size < 0) return unbound(types);
    }
    return Status::ok();
  }
  // Ok when every dim of the present inputs is known.
  Status require_fixed(const KernelInputTypes& types) const {
    for (const std::optional<Shape>& shape : types.shapes) {
      if (shape.has_value() && !shape->is_fixed()) return unbound(types);
    }
    return Status::ok();
  }

 private:
  // A symbol's bound size; a derived dim ("past+seq") from its atoms.
  std::optional<int64_t> bound_size(const Dim& dim) const {
    auto it = bindings_.find(dim.symbol_name());
    if (it != bindings_.end()) return it->second;
    std::optional<int64_t> size = DimExpr::from_dim(dim).evaluate(bindings_);
    if (size && *size >= 0) return size;
    return std::nullopt;
  }

  const Graph& graph_;
  const Node& node_;
  const std::map<std::string, int64_t>& bindings_;

  // The first symbolic dim of the inputs left unbound.
  static Status unbound(const KernelInputTypes& types) {
    for (const std::optional<Shape>& shape : types.shapes) {
      if (!shape.has_value()) continue;
      for (const Dim& dim : shape->dims()) {
        if (!dim.is_symbol()) continue;
        const std::string atom = dim_atoms(dim).front();
        return invalid_argument("bind the symbolic dim '{}' (--bind {}=SIZE)",
                                atom, atom);
      }
    }
    return invalid_argument("a dim of the inputs is unknown");
  }
};

KernelPlanEntry entry(const Node& node, std::string tiling,
                      const char* state_place, uint32_t shared_bytes,
                      uint32_t shared_limit) {
  return {node.name,   node.op,      std::move(tiling),
          state_place, shared_bytes, shared_limit};
}

// The recurrence or the chunkwise form of a matrix-state op.
Result<KernelPlanEntry> matrix_state_entry(const Node& node,
                                           const DeviceLimits& limits,
                                           bool chunkwise, int64_t rows,
                                           int64_t cols, int64_t queries,
                                           int64_t chunk) {
  if (chunkwise) {
    SEQRT_ASSIGN_OR_RETURN(
        ChunkedStateTiling tiling,
        plan_chunked_state(limits, rows, cols, queries, chunk));
    return entry(node, tiling.describe(), state_home_name(tiling.state_home),
                 tiling.shared_bytes, tiling.shared_limit);
  }
  SEQRT_ASSIGN_OR_RETURN(ColumnScanTiling tiling,
                         plan_column_scan(limits, rows, cols, queries, chunk));
  return entry(node, tiling.describe(), state_home_name(tiling.state_home),
               tiling.shared_bytes, tiling.shared_limit);
}

// The entry of one node, or none (Ok with `planned` false) for ops the
// planner does not tile.
Result<KernelPlanEntry> plan_node(const Graph& graph, const Node& node,
                                  const DeviceLimits& limits,
                                  const std::map<std::string, int64_t>& bind,
                                  bool& planned) {
  NodeDims d(graph, node, bind);
  planned = true;
  if (node.domain == kSeqrtDomain && node.op == "SelectiveScan") {
    const KernelInputTypes types = d.types(SelectiveScanInput::kCount);
    SEQRT_ASSIGN_OR_RETURN(SelectiveScanDims s,
                           check_selective_scan(node, types));
    SEQRT_RETURN_IF_ERROR(
        d.require_known(types, {s.channels, s.groups, s.state}));
    SEQRT_ASSIGN_OR_RETURN(
        ScanTiling tiling,
        plan_selective_scan(limits, s.channels / s.groups, s.state));
    return entry(node, tiling.describe(), state_home_name(tiling.state_home),
                 tiling.shared_bytes, tiling.shared_limit);
  }
  if (node.domain == kSeqrtDomain && node.op == "Attention") {
    // Q (B, Hq, Tq, d), K (B, Hkv, Tk, d), V (.., dv), past_key (.., Tp, d)
    SEQRT_ASSIGN_OR_RETURN(int64_t batch, d.dim(kAttnQ, 0));
    SEQRT_ASSIGN_OR_RETURN(int64_t heads, d.dim(kAttnQ, 1));
    SEQRT_ASSIGN_OR_RETURN(int64_t queries, d.dim(kAttnQ, 2));
    SEQRT_ASSIGN_OR_RETURN(int64_t head_size, d.dim(kAttnQ, 3));
    SEQRT_ASSIGN_OR_RETURN(int64_t keys, d.dim(kAttnK, 2));
    SEQRT_ASSIGN_OR_RETURN(int64_t value_size, d.dim(kAttnV, 3));
    int64_t past = 0;
    if (d.has(kAttnPastKey)) {
      SEQRT_ASSIGN_OR_RETURN(past, d.dim(kAttnPastKey, 2));
    }
    SEQRT_ASSIGN_OR_RETURN(AttentionTiling tiling,
                           plan_attention(limits, head_size, value_size,
                                          queries, past + keys, batch * heads));
    return entry(node, tiling.describe(), "", tiling.shared_bytes,
                 tiling.shared_limit);
  }
  if (node.domain == kSeqrtDomain && node.op == "Retention") {
    const KernelInputTypes types = d.types(RetentionInput::kCount);
    SEQRT_RETURN_IF_ERROR(d.require_fixed(types));
    SEQRT_ASSIGN_OR_RETURN(RetentionProblem p, check_retention(node, types));
    return matrix_state_entry(node, limits, prefer_chunkwise(p.seq), p.dk, p.dv,
                              1, p.chunk_size);
  }
  if (node.domain == kSeqrtDomain && node.op == "SSD") {
    SEQRT_ASSIGN_OR_RETURN(SsdAttrs attrs, SsdAttrs::from(node));
    const KernelInputTypes types = d.types(SsdInput::kCount);
    SEQRT_ASSIGN_OR_RETURN(SsdDims s, check_ssd(node, types));
    SEQRT_RETURN_IF_ERROR(
        d.require_known(types, {s.length, s.head_dim, s.state}));
    return matrix_state_entry(node, limits, prefer_chunkwise(s.length), s.state,
                              s.head_dim, 1, attrs.chunk_size);
  }
  if (node.domain == kOnnxDomain && node.op == "LinearAttention") {
    const KernelInputTypes types = d.types(LinearAttentionInput::kCount);
    SEQRT_RETURN_IF_ERROR(d.require_fixed(types));
    SEQRT_ASSIGN_OR_RETURN(LinearAttentionProblem p,
                           check_linear_attention(node, types));
    return matrix_state_entry(
        node, limits,
        linear_attention_chunkwise(rule_uses_beta(p.rule), p.decay_per_key,
                                   p.seq),
        p.dk, p.dv, p.group, p.chunk_size);
  }
  if (node.domain == kSeqrtDomain && node.op == "NeuralMemory") {
    // Only d and m size the tiling: a symbolic T still gets a plan, so
    // compile refuses a memory too large for shared memory.
    SEQRT_ASSIGN_OR_RETURN(NeuralMemoryAttrs attrs,
                           NeuralMemoryAttrs::from(node));
    SEQRT_ASSIGN_OR_RETURN(int64_t width, d.dim(kNmQ, 3));    // q (B,H,T,d)
    SEQRT_ASSIGN_OR_RETURN(int64_t hidden, d.dim(kNmW1, 2));  // W1 (H,d,m)
    SEQRT_ASSIGN_OR_RETURN(
        NeuralMemoryTiling tiling,
        plan_neural_memory(limits, width, hidden, static_cast<int>(attrs.depth),
                           attrs.chunk_size));
    // The weights live in shared memory; the tiling says where the
    // momentum is.
    return entry(node, tiling.describe(),
                 state_home_name(StateHome::kSharedMemory), tiling.shared_bytes,
                 tiling.shared_limit);
  }
  planned = false;
  return KernelPlanEntry{};
}

}  // namespace

Result<std::vector<KernelPlanEntry>> plan_cuda_kernels(
    const Graph& graph, const DeviceLimits& limits,
    const std::map<std::string, int64_t>& bindings) {
  std::vector<KernelPlanEntry> entries;
  for (const Node& node : graph.nodes) {
    bool planned = false;
    Result<KernelPlanEntry> e =
        plan_node(graph, node, limits, bindings, planned);
    if (!e.is_ok()) {
      // An op's contract check names the node already.
      const std::string message = e.status().message();
      if (message.rfind(node.label(), 0) == 0) return e.status();
      return Status(e.status().code(), node.label() + ": " + message);
    }
    if (planned) entries.push_back(std::move(e).value());
  }
  return entries;
}

Status check_plannable(const Graph& graph, const Node& node,
                       const DeviceLimits& limits) {
  bool planned = false;
  Result<KernelPlanEntry> e = plan_node(graph, node, limits, {}, planned);
  if (!e.is_ok() && e.status().code() == StatusCode::kUnsupported) {
    return Status(StatusCode::kUnsupported,
                  node.label() + ": " + e.status().message());
  }
  return Status::ok();
}

}  // namespace seqrt::cuda
