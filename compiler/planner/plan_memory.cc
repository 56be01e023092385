// plan_memory: kinds, concrete sizes, aliases (views and in-place writes),
// then arena offsets by greedy best-fit over the blocks' lifetimes.
#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <vector>

#include "compiler/planner/bind_dims.h"
#include "compiler/planner/lifetimes.h"
#include "compiler/planner/memory_plan.h"
#include "compiler/planner/op_classes.h"
#include "compiler/planner/slice_view.h"

namespace seqrt {
namespace {

// One arena allocation: a value and every value that aliases it.
struct Block {
  ValueId root = kNoValue;
  int64_t bytes = 0;  // aligned
  int first = 0;
  int last = 0;  // the last step any member is read
  int64_t offset = -1;
};

bool intervals_overlap(const Block& a, const Block& b) {
  return a.first <= b.last && b.first <= a.last;
}

// Concrete types of every used value. A value whose size inference cannot
// tell before run time (a data-dependent shape) gets bytes -1; a node's
// output of that kind is allocated at run time (kDynamic).
Status fill_types(const Graph& bound, MemoryPlan& plan) {
  const std::vector<int> producers = bound.producers();
  for (size_t id = 0; id < plan.values.size(); ++id) {
    ValuePlan& value = plan.values[id];
    if (value.kind == MemoryKind::kUnused) continue;
    const Value& typed = bound.values[id];
    value.dtype = typed.dtype;
    if (known_only_at_run_time(typed)) {
      value.bytes = -1;
      if (value.kind == MemoryKind::kArena) value.kind = MemoryKind::kDynamic;
      continue;
    }
    const Node* producer =
        producers[id] >= 0 ? &bound.nodes[producers[id]] : nullptr;
    SEQRT_ASSIGN_OR_RETURN(value.dims,
                           concrete_dims(typed, producer, plan.dim_bindings));
    int64_t elements = 1;
    for (int64_t dim : value.dims) elements *= dim;
    value.bytes = static_cast<int64_t>(
        dtype_bytes(typed.dtype, static_cast<size_t>(elements)));
  }
  return Status::ok();
}

// Marks the arena values whose tensors bound inference computed (and that
// match their planned type) kPrecomputed, keeps the tensors, and marks the
// nodes whose every output is one.
void mark_precomputed(const Graph& graph,
                      const std::map<ValueId, Tensor>& computed,
                      MemoryPlan& plan) {
  for (const auto& [id, tensor] : computed) {
    ValuePlan& value = plan.values[id];
    if (value.kind != MemoryKind::kArena || tensor.dtype() != value.dtype ||
        tensor.dims() != value.dims) {
      continue;
    }
    value.kind = MemoryKind::kPrecomputed;
    plan.precomputed.emplace_back(id, tensor);
  }
  plan.precomputed_nodes.assign(graph.nodes.size(), false);
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const Node& node = graph.nodes[n];
    bool all = !node.outputs.empty() && !node.has_subgraphs();
    for (ValueId id : node.outputs) {
      all = all && (id == kNoValue ||
                    plan.values[id].kind == MemoryKind::kPrecomputed);
    }
    plan.precomputed_nodes[n] = all;
  }
}

// Index of the block `out` may write in place: an arena input of the same
// size whose block nothing reads after this step. -1 when there is none.
int in_place_block(const Node& node, int step, ValueId out,
                   const MemoryPlan& plan, const std::vector<int>& block_of,
                   const std::vector<Block>& blocks) {
  const int64_t bytes = plan.values[out].bytes;
  if (bytes == 0) return -1;
  for (ValueId in : node.inputs) {
    if (in == kNoValue || plan.values[in].kind != MemoryKind::kArena) continue;
    if (plan.values[in].bytes != bytes) continue;
    const int block = block_of[in];
    if (blocks[block].last == step) return block;
  }
  return -1;
}

// Walks the schedule giving each arena output a block: its view input's,
// a dying input's (elementwise ops), or a new one; `block_of` gets each
// arena value's block index and `within` its byte offset in that block
// (not 0 only for slice views).
std::vector<Block> assign_blocks(const Graph& graph, MemoryPlan& plan,
                                 std::vector<int>& block_of,
                                 std::vector<int64_t>& within) {
  std::vector<Block> blocks;
  block_of.assign(plan.values.size(), -1);
  within.assign(plan.values.size(), 0);
  auto join = [&](ValueId out, ValueId in, bool in_place, int64_t skip) {
    ValuePlan& value = plan.values[out];
    value.alias_of = in;
    value.in_place = in_place;
    const int block = block_of[in];
    block_of[out] = block;
    within[out] = within[in] + skip;
    blocks[block].last = std::max(blocks[block].last, value.last_step);
  };
  // A view of an input, a state, a weight or a dynamic value takes its
  // kind and no arena bytes.
  auto view = [&](ValueId out, ValueId in, int64_t skip) {
    if (plan.values[in].kind == MemoryKind::kPrecomputed) {
      // Made once per plan: a view of it would be a precomputed value
      // that the run still computes, so the view gets bytes of its own.
      block_of[out] = static_cast<int>(blocks.size());
      const ValuePlan& value = plan.values[out];
      blocks.push_back({out, align_arena(value.bytes), value.first_step,
                        value.last_step, -1});
    } else if (plan.values[in].kind == MemoryKind::kArena) {
      join(out, in, false, skip);
    } else {
      plan.values[out].kind = plan.values[in].kind;
      plan.values[out].alias_of = in;
    }
  };
  for (int step = 0; step < static_cast<int>(plan.schedule.size()); ++step) {
    const Node& node = graph.nodes[plan.schedule[step]];
    for (ValueId out : node.outputs) {
      if (out == kNoValue || plan.values[out].kind != MemoryKind::kArena) {
        continue;
      }
      ValuePlan& value = plan.values[out];
      const ValueId in = node.inputs.empty() ? kNoValue : node.inputs[0];
      if (is_view_op(node) && in != kNoValue &&
          plan.values[in].bytes == value.bytes) {
        view(out, in, 0);
        continue;
      }
      if (in != kNoValue) {
        if (std::optional<int64_t> skip =
                slice_view_offset(graph, node, plan.values[in], value)) {
          view(out, in, *skip);
          continue;
        }
      }
      if (is_elementwise_op(node)) {
        const int block =
            in_place_block(node, step, out, plan, block_of, blocks);
        if (block >= 0) {
          ValueId source = kNoValue;
          for (ValueId candidate : node.inputs) {
            if (candidate != kNoValue && block_of[candidate] == block) {
              source = candidate;
              break;
            }
          }
          join(out, source, true, 0);
          continue;
        }
      }
      block_of[out] = static_cast<int>(blocks.size());
      blocks.push_back({out, align_arena(value.bytes), value.first_step,
                        value.last_step, -1});
    }
  }
  return blocks;
}

// Best fit: among the gaps left by placed blocks whose lifetimes overlap
// this one's, the smallest that holds it; else on top of them.
int64_t best_fit_offset(const Block& block, const std::vector<Block*>& placed) {
  std::vector<const Block*> live;
  for (const Block* other : placed) {
    if (intervals_overlap(block, *other)) live.push_back(other);
  }
  std::sort(live.begin(), live.end(), [](const Block* a, const Block* b) {
    return a->offset < b->offset;
  });
  int64_t best = -1;
  int64_t best_gap = std::numeric_limits<int64_t>::max();
  int64_t cursor = 0;
  for (const Block* other : live) {
    const int64_t gap = other->offset - cursor;
    if (gap >= block.bytes && gap < best_gap) {
      best = cursor;
      best_gap = gap;
    }
    cursor = std::max(cursor, other->offset + other->bytes);
  }
  return best >= 0 ? best : cursor;
}

// Largest blocks first: they are the hardest to fit, and smaller ones then
// fill the gaps between them. Ties go by start step, then value id, so that
// plans are deterministic.
int64_t place_blocks(std::vector<Block>& blocks) {
  std::vector<Block*> order;
  for (Block& block : blocks) order.push_back(&block);
  std::sort(order.begin(), order.end(), [](const Block* a, const Block* b) {
    if (a->bytes != b->bytes) return a->bytes > b->bytes;
    if (a->first != b->first) return a->first < b->first;
    return a->root < b->root;
  });
  std::vector<Block*> placed;
  int64_t peak = 0;
  for (Block* block : order) {
    block->offset = block->bytes == 0 ? 0 : best_fit_offset(*block, placed);
    if (block->bytes > 0) placed.push_back(block);
    peak = std::max(peak, block->offset + block->bytes);
  }
  return peak;
}

}  // namespace

const char* memory_kind_name(MemoryKind kind) {
  switch (kind) {
    case MemoryKind::kUnused:
      return "unused";
    case MemoryKind::kArena:
      return "arena";
    case MemoryKind::kState:
      return "state";
    case MemoryKind::kIo:
      return "io";
    case MemoryKind::kConstant:
      return "constant";
    case MemoryKind::kDynamic:
      return "dynamic";
    case MemoryKind::kPrecomputed:
      return "precomputed";
  }
  return "?";
}

Result<MemoryPlan> plan_memory(
    const Graph& graph, const std::map<std::string, int64_t>& dim_bindings,
    const std::map<ValueId, Tensor>& input_values) {
  MemoryPlan plan;
  plan.dim_bindings = dim_bindings;
  SEQRT_ASSIGN_OR_RETURN(plan.schedule, graph.topological_order());
  SEQRT_ASSIGN_OR_RETURN(std::vector<MemoryKind> kinds,
                         base_value_kinds(graph));
  SEQRT_ASSIGN_OR_RETURN(std::vector<Lifetime> lifetimes,
                         value_lifetimes(graph, plan.schedule));
  plan.values.resize(graph.values.size());
  for (size_t id = 0; id < plan.values.size(); ++id) {
    plan.values[id].kind = kinds[id];
    plan.values[id].first_step = lifetimes[id].first;
    plan.values[id].last_step = lifetimes[id].last;
  }
  std::map<ValueId, Tensor> computed;
  SEQRT_ASSIGN_OR_RETURN(
      Graph bound, bind_dims(graph, dim_bindings, &computed, input_values));
  SEQRT_RETURN_IF_ERROR(fill_types(bound, plan));
  mark_precomputed(graph, computed, plan);

  std::vector<int> block_of;
  std::vector<int64_t> within;
  std::vector<Block> blocks = assign_blocks(graph, plan, block_of, within);
  plan.peak_arena_bytes = place_blocks(blocks);
  for (size_t id = 0; id < plan.values.size(); ++id) {
    ValuePlan& value = plan.values[id];
    if (value.kind != MemoryKind::kArena) continue;
    value.offset = blocks[block_of[id]].offset + within[id];
    plan.naive_arena_bytes += align_arena(value.bytes);
  }
  return plan;
}

}  // namespace seqrt
