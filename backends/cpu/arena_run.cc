#include "backends/cpu/arena_run.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "compiler/planner/bind_dims.h"

namespace seqrt::cpu {
namespace {

// Distinct dim bindings kept; a caller cycling through more (every prompt
// length, say) re-plans rather than growing without bound.
constexpr size_t kMaxPlans = 64;
// Bindings remembered as met once, to plan them when they come again.
constexpr size_t kMaxMetOnce = 64;
// Arenas kept for reuse: about one per run in flight.
constexpr size_t kMaxFreeArenas = 4;

// Bytes of a tensor of `dims` and `dtype`, or -1 on overflow.
int64_t bytes_of(DType dtype, const std::vector<int64_t>& dims) {
  int64_t count = 1;
  for (int64_t d : dims) {
    if (d < 0 || __builtin_mul_overflow(count, d, &count)) return -1;
  }
  int64_t bits = 0;
  if (__builtin_mul_overflow(count, static_cast<int64_t>(dtype_bits(dtype)),
                             &bits)) {
    return -1;
  }
  return (bits + 7) / 8;
}

}  // namespace

std::shared_ptr<const MemoryPlan> ArenaRunner::plan_for(
    const std::vector<Tensor>& inputs) const {
  Bindings bindings = bindings_from_inputs(graph_, inputs);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = plans_.find(bindings);
    if (found != plans_.end()) return found->second;
    auto met = std::find(met_once_.begin(), met_once_.end(), bindings);
    if (met != met_once_.end()) {
      met_once_.erase(met);
    } else if (!bindings.empty()) {
      if (met_once_.size() >= kMaxMetOnce) met_once_.pop_front();
      met_once_.push_back(std::move(bindings));
      ++first_sights_;
      return nullptr;
    }
  }
  // Planned outside the lock: two runs meeting a new binding at once both
  // plan it, and the first to finish is kept.
  Result<MemoryPlan> made = plan_memory(graph_, bindings);
  std::shared_ptr<const MemoryPlan> plan;
  if (made.is_ok()) {
    plan = std::make_shared<const MemoryPlan>(std::move(made).value());
  }
  ++plans_made_;
  std::lock_guard<std::mutex> lock(mutex_);
  if (plans_.size() >= kMaxPlans) plans_.clear();
  return plans_.emplace(std::move(bindings), std::move(plan)).first->second;
}

std::shared_ptr<Tensor> ArenaRunner::acquire_arena(int64_t bytes) const {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = free_arenas_.begin(); it != free_arenas_.end(); ++it) {
      if (static_cast<int64_t>((*it)->byte_size()) >= bytes) {
        std::shared_ptr<Tensor> arena = std::move(*it);
        free_arenas_.erase(it);
        return arena;
      }
    }
  }
  Result<Tensor> arena = Tensor::allocate(DType::kU8, {bytes});
  if (!arena.is_ok()) return nullptr;
  ++arenas_made_;
  return std::make_shared<Tensor>(std::move(arena).value());
}

void ArenaRunner::release_arena(std::shared_ptr<Tensor> arena) const {
  // Still shared: some tensor of the run outlived it; leave it to that.
  if (arena == nullptr || arena.use_count() != 1) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (free_arenas_.size() >= kMaxFreeArenas) {
    // Keep the largest arenas: they serve every smaller binding too.
    auto smallest = free_arenas_.begin();
    for (auto it = free_arenas_.begin(); it != free_arenas_.end(); ++it) {
      if ((*it)->byte_size() < (*smallest)->byte_size()) smallest = it;
    }
    if ((*smallest)->byte_size() >= arena->byte_size()) return;
    free_arenas_.erase(smallest);
  }
  free_arenas_.push_back(std::move(arena));
}

Result<std::vector<Tensor>> ArenaRunner::run(std::vector<Tensor> inputs,
                                             const KernelChooser& choose,
                                             InterpretOptions options) const {
  std::shared_ptr<const MemoryPlan> plan = plan_for(inputs);
  if (plan != nullptr) {
    options.precomputed = &plan->precomputed;
    options.skipped_nodes = &plan->precomputed_nodes;
  }
  std::shared_ptr<Tensor> arena;
  if (plan != nullptr && plan->peak_arena_bytes > 0) {
    arena = acquire_arena(plan->peak_arena_bytes);
  }
  if (arena == nullptr) {
    return interpret_graph(graph_, std::move(inputs), choose, nullptr, options);
  }
  char* base = static_cast<char*>(arena->mutable_data());
  const uintptr_t begin = reinterpret_cast<uintptr_t>(base);
  const uintptr_t end = begin + arena->byte_size();

  options.place_output = [&](ValueId id, DType dtype,
                             const std::vector<int64_t>& dims) -> Tensor {
    const ValuePlan& value = plan->values[id];
    // Views are made by their kernels from their input's storage.
    if (value.kind != MemoryKind::kArena ||
        (value.alias_of != kNoValue && !value.in_place)) {
      return Tensor();
    }
    const int64_t bytes = bytes_of(dtype, dims);
    if (bytes < 0 || bytes > value.bytes) return Tensor();
    char* at = base + value.offset;
    // In place, the block holds the dying input the kernel reads.
    if (!value.in_place) std::memset(at, 0, static_cast<size_t>(bytes));
    ++placed_;
    return Tensor::writable_view(dtype, dims, at, arena);
  };
  options.adopt_output = [&](ValueId id, Tensor& tensor) -> Status {
    const uintptr_t at = reinterpret_cast<uintptr_t>(tensor.data());
    if (at < begin || at >= end) return Status::ok();
    const ValuePlan& value = plan->values[id];
    if (value.kind == MemoryKind::kArena &&
        at == begin + static_cast<uintptr_t>(value.offset) &&
        static_cast<int64_t>(tensor.byte_size()) <= value.bytes) {
      return Status::ok();
    }
    // An alias the plan does not know of (a kernel handing back its
    // input): its block may be reused while it is still read.
    tensor = tensor.clone();
    ++copied_out_;
    return Status::ok();
  };
  Result<std::vector<Tensor>> outputs =
      interpret_graph(graph_, std::move(inputs), choose, nullptr, options);
  release_arena(std::move(arena));
  return outputs;
}

ArenaRunner::Stats ArenaRunner::stats() const {
  Stats stats;
  stats.plans_made = plans_made_;
  stats.first_sights = first_sights_;
  stats.placed = placed_;
  stats.copied_out = copied_out_;
  stats.arenas_made = arenas_made_;
  return stats;
}

}  // namespace seqrt::cpu
