// validate_plan: re-derives from the graph what a plan must satisfy and
// checks every value and every pair of arena values against it.
#include <algorithm>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "compiler/planner/bind_dims.h"
#include "compiler/planner/lifetimes.h"
#include "compiler/planner/memory_plan.h"
#include "compiler/planner/op_classes.h"
#include "compiler/planner/slice_view.h"

namespace seqrt {
namespace {

std::string value_label(const Graph& graph, ValueId id) {
  return fmt::format("value '{}'", graph.value(id).name);
}

// The plan's dtype and dims are those of the value in `bound` (the graph
// typed under the plan's bindings), and its byte count follows from them;
// a size known only at run time is bytes -1 with no dims.
Status check_type(const Graph& bound, const MemoryPlan& plan, ValueId id) {
  const Value& typed = bound.value(id);
  const ValuePlan& value = plan.values[id];
  if (known_only_at_run_time(typed)) {
    if (value.bytes != -1 || !value.dims.empty() ||
        value.dtype != typed.dtype) {
      return internal_error(
          "{} has a size known only at run time but is planned as {} {} of "
          "{} bytes",
          value_label(bound, id), dtype_name(value.dtype),
          dims_to_string(value.dims), value.bytes);
    }
    return Status::ok();
  }
  if (value.kind == MemoryKind::kDynamic) {
    return internal_error("{} is planned as dynamic but its size is known",
                          value_label(bound, id));
  }
  SEQRT_ASSIGN_OR_RETURN(std::vector<int64_t> dims,
                         concrete_dims(typed, nullptr, plan.dim_bindings));
  if (typed.dtype != value.dtype || dims != value.dims) {
    return internal_error("{} is {} {} but planned as {} {}",
                          value_label(bound, id), dtype_name(typed.dtype),
                          dims_to_string(dims), dtype_name(value.dtype),
                          dims_to_string(value.dims));
  }
  SEQRT_ASSIGN_OR_RETURN(int64_t elements, checked_num_elements(value.dims));
  if (value.bytes != static_cast<int64_t>(dtype_bytes(
                         value.dtype, static_cast<size_t>(elements)))) {
    return internal_error("{}: {} bytes planned for {} {}",
                          value_label(bound, id), value.bytes,
                          dtype_name(value.dtype), dims_to_string(value.dims));
  }
  return Status::ok();
}

// A declared alias must come from its producer: a view op's data input,
// the input of a Slice that is one contiguous run of it (at the run's byte
// offset), or an input of the same size of an elementwise op.
Status check_alias(const Graph& graph, const MemoryPlan& plan, ValueId id,
                   const std::vector<int>& producers) {
  const ValuePlan& value = plan.values[id];
  const ValueId source = value.alias_of;
  if (source < 0 || source >= static_cast<ValueId>(plan.values.size()) ||
      producers[id] < 0) {
    return internal_error("{} aliases value {}, which it cannot",
                          value_label(graph, id), source);
  }
  const Node& node = graph.nodes[producers[id]];
  const ValuePlan& from = plan.values[source];
  const bool reads = std::find(node.inputs.begin(), node.inputs.end(),
                               source) != node.inputs.end();
  const bool data_input = !node.inputs.empty() && node.inputs[0] == source &&
                          !value.in_place && from.kind == value.kind;
  // -1: not a slice view (an optional here trips GCC's maybe-uninitialized
  // at -O3).
  const int64_t slice_skip =
      data_input ? slice_view_offset(graph, node, from, value).value_or(-1)
                 : -1;
  const bool view_ok =
      data_input && is_view_op(node) && from.bytes == value.bytes;
  const bool slice_ok =
      slice_skip >= 0 && slice_skip + value.bytes <= from.bytes;
  const bool in_place_ok = value.in_place && is_elementwise_op(node) && reads &&
                           value.kind == MemoryKind::kArena &&
                           from.kind == MemoryKind::kArena &&
                           from.bytes == value.bytes;
  if (!(view_ok || slice_ok || in_place_ok)) {
    return internal_error("{}: output {} may not alias '{}' as {}",
                          node.label(), value_label(graph, id),
                          graph.value(source).name,
                          value.in_place ? "an in-place write" : "a view");
  }
  const int64_t expected =
      from.offset + (slice_ok && !view_ok ? slice_skip : 0);
  if (value.kind == MemoryKind::kArena && value.offset != expected) {
    return internal_error("{} aliases '{}' but sits at offset {}, not {}",
                          value_label(graph, id), graph.value(source).name,
                          value.offset, expected);
  }
  return Status::ok();
}

Status check_value(const Graph& graph, const Graph& bound,
                   const MemoryPlan& plan, ValueId id, MemoryKind base_kind,
                   const Lifetime& lifetime,
                   const std::vector<int>& producers) {
  const ValuePlan& value = plan.values[id];
  const bool view_kind = base_kind == MemoryKind::kArena &&
                         value.alias_of != kNoValue && !value.in_place;
  // check_type then requires the size to be known only at run time.
  const bool dynamic_kind =
      base_kind == MemoryKind::kArena && value.kind == MemoryKind::kDynamic;
  const bool precomputed_kind =
      base_kind == MemoryKind::kArena && value.kind == MemoryKind::kPrecomputed;
  if (value.kind != base_kind && !view_kind && !dynamic_kind &&
      !precomputed_kind) {
    return internal_error("{} is {} but planned as {}", value_label(graph, id),
                          memory_kind_name(base_kind),
                          memory_kind_name(value.kind));
  }
  if (value.kind == MemoryKind::kUnused) return Status::ok();
  if (value.alias_of != kNoValue && base_kind != MemoryKind::kArena) {
    return internal_error("{} is {}: only a node's transient output may alias",
                          value_label(graph, id), memory_kind_name(base_kind));
  }
  if (value.first_step != lifetime.first || value.last_step != lifetime.last) {
    return internal_error(
        "{} lives over steps {}..{} but is planned for {}..{}",
        value_label(graph, id), lifetime.first, lifetime.last, value.first_step,
        value.last_step);
  }
  SEQRT_RETURN_IF_ERROR(check_type(bound, plan, id));
  if (value.alias_of != kNoValue) {
    SEQRT_RETURN_IF_ERROR(check_alias(graph, plan, id, producers));
  } else if (value.in_place) {
    return internal_error("{} is in place but aliases nothing",
                          value_label(graph, id));
  }
  if (value.kind != MemoryKind::kArena) return Status::ok();
  // An alias sits where check_alias says; a block of its own is aligned.
  const bool aligned =
      value.alias_of != kNoValue || value.offset % kArenaAlignment == 0;
  const int64_t extent =
      value.alias_of != kNoValue ? value.bytes : align_arena(value.bytes);
  if (value.offset < 0 || !aligned ||
      value.offset + extent > plan.peak_arena_bytes) {
    return internal_error(
        "{}: offset {} and size {} do not fit a {}-byte aligned arena of {} "
        "bytes",
        value_label(graph, id), value.offset, value.bytes, kArenaAlignment,
        plan.peak_arena_bytes);
  }
  return Status::ok();
}

bool bytes_overlap(const ValuePlan& a, const ValuePlan& b) {
  return a.bytes > 0 && b.bytes > 0 && a.offset < b.offset + b.bytes &&
         b.offset < a.offset + a.bytes;
}

bool steps_overlap(const ValuePlan& a, const ValuePlan& b) {
  return a.first_step <= b.last_step && b.first_step <= a.last_step;
}

// Two arena values alive together may share bytes only within one alias
// chain; and an in-place write must come after every read of the bytes it
// overwrites.
Status check_overlaps(const Graph& graph, const MemoryPlan& plan) {
  std::vector<ValueId> arena;
  for (size_t id = 0; id < plan.values.size(); ++id) {
    if (plan.values[id].kind == MemoryKind::kArena) arena.push_back(id);
  }
  std::vector<ValueId> roots(plan.values.size(), kNoValue);
  for (ValueId id : arena) roots[id] = alias_root(plan, id);
  for (size_t i = 0; i < arena.size(); ++i) {
    const ValuePlan& a = plan.values[arena[i]];
    for (size_t j = i + 1; j < arena.size(); ++j) {
      const ValuePlan& b = plan.values[arena[j]];
      if (!steps_overlap(a, b) || !bytes_overlap(a, b)) continue;
      const bool same_chain = roots[arena[i]] == roots[arena[j]];
      const ValuePlan& later = a.first_step > b.first_step ? a : b;
      const ValuePlan& earlier = a.first_step > b.first_step ? b : a;
      if (same_chain &&
          (!later.in_place || earlier.last_step <= later.first_step)) {
        continue;
      }
      return internal_error(
          "values '{}' (steps {}..{}, bytes {}..{}) and '{}' (steps {}..{}, "
          "bytes {}..{}) share arena bytes while both are alive",
          graph.value(arena[i]).name, a.first_step, a.last_step, a.offset,
          a.offset + a.bytes, graph.value(arena[j]).name, b.first_step,
          b.last_step, b.offset, b.offset + b.bytes);
    }
  }
  return Status::ok();
}

// Each kPrecomputed value has its tensor, of its planned type, and a node
// is skipped exactly when all it produces is precomputed.
Status check_precomputed(const Graph& graph, const MemoryPlan& plan) {
  std::vector<bool> held(plan.values.size(), false);
  for (const auto& [id, tensor] : plan.precomputed) {
    const ValuePlan& value = plan.values.at(id);
    if (value.kind != MemoryKind::kPrecomputed ||
        tensor.dtype() != value.dtype || tensor.dims() != value.dims) {
      return internal_error(
          "{}: the precomputed tensor {} {} does not match the plan",
          value_label(graph, id), dtype_name(tensor.dtype()),
          dims_to_string(tensor.dims()));
    }
    held[id] = true;
  }
  for (size_t id = 0; id < plan.values.size(); ++id) {
    if (plan.values[id].kind == MemoryKind::kPrecomputed && !held[id]) {
      return internal_error("{} is precomputed but has no tensor",
                            value_label(graph, static_cast<ValueId>(id)));
    }
  }
  if (plan.precomputed_nodes.size() != graph.nodes.size()) {
    return internal_error(
        "plan marks {} nodes precomputed or not; graph '{}' "
        "has {}",
        plan.precomputed_nodes.size(), graph.name, graph.nodes.size());
  }
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const Node& node = graph.nodes[n];
    bool all = !node.outputs.empty() && !node.has_subgraphs();
    for (ValueId id : node.outputs) {
      all = all && (id == kNoValue || held[id]);
    }
    if (all != plan.precomputed_nodes[n]) {
      return internal_error(
          "{} is {}skipped but {}all its outputs are "
          "precomputed",
          node.label(), all ? "not " : "", all ? "" : "not ");
    }
  }
  return Status::ok();
}

}  // namespace

Status validate_plan(const Graph& graph, const MemoryPlan& plan) {
  if (plan.values.size() != graph.values.size()) {
    return internal_error("plan has {} values, graph '{}' has {}",
                          plan.values.size(), graph.name, graph.values.size());
  }
  SEQRT_ASSIGN_OR_RETURN(std::vector<MemoryKind> kinds,
                         base_value_kinds(graph));
  SEQRT_ASSIGN_OR_RETURN(std::vector<Lifetime> lifetimes,
                         value_lifetimes(graph, plan.schedule));
  SEQRT_ASSIGN_OR_RETURN(Graph bound, bind_dims(graph, plan.dim_bindings));
  const std::vector<int> producers = graph.producers();
  int64_t naive = 0;
  for (size_t id = 0; id < plan.values.size(); ++id) {
    SEQRT_RETURN_IF_ERROR(check_value(graph, bound, plan, id, kinds[id],
                                      lifetimes[id], producers));
    if (plan.values[id].kind == MemoryKind::kArena) {
      naive += align_arena(plan.values[id].bytes);
    }
  }
  SEQRT_RETURN_IF_ERROR(check_overlaps(graph, plan));
  SEQRT_RETURN_IF_ERROR(check_precomputed(graph, plan));
  if (naive != plan.naive_arena_bytes) {
    return internal_error("naive sum is {} bytes but the plan says {}", naive,
                          plan.naive_arena_bytes);
  }
  if (plan.peak_arena_bytes > plan.naive_arena_bytes) {
    return internal_error("peak arena {} bytes exceeds the naive sum {}",
                          plan.peak_arena_bytes, plan.naive_arena_bytes);
  }
  return Status::ok();
}

}  // namespace seqrt
