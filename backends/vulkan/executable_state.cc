// VulkanExecutable's Streams (executable.h): the state kept on the device
// between steps in ping-pong buffers, and the programs recorded for them.
#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "backends/vulkan/executable.h"
#include "backends/vulkan/executable_recording.h"
#include "compiler/planner/op_classes.h"

namespace seqrt::vulkan {

// A Stream's state: per state pair two device buffers, one holding the
// state and one for the next (ping-pong), and the programs recorded with
// them bound.
class VulkanExecutable::State : public ExecutableState {
 public:
  State(const VulkanExecutable* owner, DeviceContext context)
      : owner(owner), context(std::move(context)) {}

  std::vector<std::vector<int64_t>> dims() const override {
    std::vector<std::vector<int64_t>> all;
    for (const Slot& slot : slots) all.push_back(slot.dims);
    return all;
  }

  struct Slot {
    DType dtype = DType::kUndefined;
    std::vector<int64_t> dims;
    VkDeviceSize bytes = 0;
    std::unique_ptr<Allocation> buffers[2];
    VkDeviceSize capacity[2] = {0, 0};
    int current = 0;  // the buffer holding the state

    BufferSlice slice(int which, VkDeviceSize size) const {
      BufferSlice slice = buffers[which]->slice();
      slice.bytes = size;
      return slice;
    }
  };
  // A program for one Prepared with these state places bound (the pairs'
  // inputs, then their outputs).
  struct Variant {
    std::shared_ptr<Prepared> prepared;
    std::vector<BufferSlice> places;
    std::unique_ptr<Recorded> recorded;
    uint64_t used = 0;
  };

  // Buffer `which` of `slot` holds at least `bytes`; variants bound to a
  // buffer it replaces are dropped. A failure keeps the old buffer.
  Status reserve(Slot& slot, int which, VkDeviceSize bytes) {
    std::unique_ptr<Allocation>& buffer = slot.buffers[which];
    if (buffer != nullptr && slot.capacity[which] >= bytes) {
      return Status::ok();
    }
    // A state that grows (a concatenated KV cache) doubles its buffer.
    const VkDeviceSize capacity =
        std::max(bytes, buffer != nullptr ? 2 * slot.capacity[which] : 0);
    SEQRT_ASSIGN_OR_RETURN(
        std::unique_ptr<Allocation> fresh,
        context.allocator->allocate(capacity, MemoryPlace::kDevice,
                                    "allocating a stream's state"));
    if (buffer != nullptr) {
      const BufferSlice old = buffer->slice();
      auto bound_to_old = [&](const Variant& variant) {
        for (const BufferSlice& place : variant.places) {
          if (place.buffer == old.buffer && place.offset == old.offset) {
            return true;
          }
        }
        return false;
      };
      variants.erase(
          std::remove_if(variants.begin(), variants.end(), bound_to_old),
          variants.end());
    }
    buffer = std::move(fresh);
    slot.capacity[which] = capacity;
    return Status::ok();
  }

  Variant* find(const Prepared* prepared,
                const std::vector<BufferSlice>& places) {
    for (Variant& variant : variants) {
      if (variant.prepared.get() != prepared) continue;
      bool same = variant.places.size() == places.size();
      for (size_t i = 0; same && i < places.size(); ++i) {
        same = variant.places[i].buffer == places[i].buffer &&
               variant.places[i].offset == places[i].offset &&
               variant.places[i].bytes == places[i].bytes;
      }
      if (same) return &variant;
    }
    return nullptr;
  }

  // Two per signature (the ping-pong parities); a state whose dims change
  // every step (a growing cache) would otherwise keep every old program.
  static constexpr size_t kMaxVariants = 8;

  const VulkanExecutable* owner;
  DeviceContext context;  // keeps the allocator alive for the buffers
  std::vector<Slot> slots;
  std::vector<Variant> variants;
  uint64_t clock = 0;
};

namespace {

// The index in graph.state_pairs of the pair whose input is `id`, or -1.
int state_of_input(const Graph& graph, ValueId id) {
  for (size_t p = 0; p < graph.state_pairs.size(); ++p) {
    if (graph.state_pairs[p].input == id) return static_cast<int>(p);
  }
  return -1;
}

// Whether a pair's output may overwrite its input's buffer: an elementwise
// op makes it from the input (element i from element i: same dims and
// element size) and nothing reads the input after that op.
bool updates_in_place(const Graph& graph, const MemoryPlan& plan,
                      const StatePair& pair) {
  const ValuePlan& in = plan.values[pair.input];
  const ValuePlan& out = plan.values[pair.output];
  if (in.dims != out.dims || in.bytes != out.bytes || in.bytes <= 0 ||
      dtype_size(in.dtype) != dtype_size(out.dtype) ||
      in.last_step > out.first_step) {
    return false;
  }
  const std::vector<int> producers = graph.producers();
  const int producer = producers[pair.output];
  if (producer < 0) return false;
  const Node& node = graph.nodes[producer];
  return is_elementwise_op(node) &&
         std::find(node.inputs.begin(), node.inputs.end(), pair.input) !=
             node.inputs.end();
}

}  // namespace

Result<VulkanExecutable::State*> VulkanExecutable::own_state(
    const ExecutableState& state) const {
  const auto* held = dynamic_cast<const State*>(&state);
  if (held == nullptr || held->owner != this) {
    return invalid_argument(
        "vulkan: the state was made by another executable; use one from "
        "this executable's create_state()");
  }
  return const_cast<State*>(held);
}

Status VulkanExecutable::check_state_tensors(
    const std::vector<Tensor>& tensors) const {
  if (tensors.size() != graph_.state_pairs.size()) {
    return invalid_argument("graph '{}' has {} state pair(s), got {} state(s)",
                            graph_.name, graph_.state_pairs.size(),
                            tensors.size());
  }
  for (size_t p = 0; p < tensors.size(); ++p) {
    const Value& input = graph_.value(graph_.state_pairs[p].input);
    const Tensor& tensor = tensors[p];
    bool fits = tensor.dtype() == input.dtype;
    if (fits && input.shape) {
      fits = input.shape->rank() == tensor.rank();
      for (size_t d = 0; fits && d < tensor.rank(); ++d) {
        const Dim& dim = (*input.shape)[d];
        fits = !dim.is_fixed() || dim.value() == tensor.dim(d);
      }
    }
    if (!fits) {
      return invalid_argument("state '{}' must be {} {}, got {} {}", input.name,
                              dtype_name(input.dtype),
                              input.shape ? input.shape->to_string() : "(any)",
                              dtype_name(tensor.dtype()),
                              dims_to_string(tensor.dims()));
    }
  }
  return Status::ok();
}

Result<std::unique_ptr<ExecutableState>> VulkanExecutable::create_state(
    const std::vector<Tensor>& state) const {
  auto held = std::make_unique<State>(this, context_);
  held->slots.resize(graph_.state_pairs.size());
  SEQRT_RETURN_IF_ERROR(write_state(*held, state));
  return std::unique_ptr<ExecutableState>(std::move(held));
}

Status VulkanExecutable::write_state(ExecutableState& state,
                                     const std::vector<Tensor>& tensors) const {
  SEQRT_ASSIGN_OR_RETURN(State * held, own_state(state));
  SEQRT_RETURN_IF_ERROR(check_state_tensors(tensors));
  std::lock_guard<std::mutex> lock(mutex_);
  int64_t messages_before = context_.device->validation_messages();
  for (size_t p = 0; p < tensors.size(); ++p) {
    State::Slot& slot = held->slots[p];
    const Tensor& tensor = tensors[p];
    const VkDeviceSize bytes = tensor.byte_size();
    SEQRT_RETURN_IF_ERROR(held->reserve(slot, slot.current, bytes));
    std::string doing = fmt::format(
        "writing state '{}'", graph_.value(graph_.state_pairs[p].input).name);
    SEQRT_RETURN_IF_ERROR(upload(context_, slot.slice(slot.current, bytes),
                                 tensor.data(), bytes, doing.c_str()));
    count(true, bytes);
    slot.dtype = tensor.dtype();
    slot.dims = tensor.dims();
    slot.bytes = bytes;
  }
  return check_validation(*context_.device, messages_before);
}

Result<std::vector<Tensor>> VulkanExecutable::read_state(
    const ExecutableState& state) const {
  SEQRT_ASSIGN_OR_RETURN(State * held, own_state(state));
  std::lock_guard<std::mutex> lock(mutex_);
  int64_t messages_before = context_.device->validation_messages();
  std::vector<Tensor> tensors;
  for (size_t p = 0; p < held->slots.size(); ++p) {
    const State::Slot& slot = held->slots[p];
    SEQRT_ASSIGN_OR_RETURN(Tensor tensor,
                           Tensor::allocate(slot.dtype, slot.dims));
    std::string doing = fmt::format(
        "reading state '{}'", graph_.value(graph_.state_pairs[p].input).name);
    SEQRT_RETURN_IF_ERROR(
        download(context_, slot.slice(slot.current, slot.bytes),
                 tensor.mutable_data(), slot.bytes, doing.c_str()));
    count(false, slot.bytes);
    tensors.push_back(std::move(tensor));
  }
  SEQRT_RETURN_IF_ERROR(check_validation(*context_.device, messages_before));
  return tensors;
}

Result<std::vector<Tensor>> VulkanExecutable::run_with_state(
    std::vector<Tensor> inputs, ExecutableState& state) const {
  SEQRT_ASSIGN_OR_RETURN(State * held, own_state(state));
  const size_t pairs = graph_.state_pairs.size();
  if (inputs.size() + pairs != graph_.inputs.size()) {
    return invalid_argument(
        "the graph takes {} input(s) besides its {} state(s), got {}",
        graph_.inputs.size() - pairs, pairs, inputs.size());
  }
  // The graph's inputs in order, the states' dims in their places.
  std::vector<std::vector<int64_t>> dims;
  std::vector<const Tensor*> fed;
  size_t next = 0;
  for (ValueId id : graph_.inputs) {
    const int pair = state_of_input(graph_, id);
    if (pair >= 0) {
      dims.push_back(held->slots[pair].dims);
      fed.push_back(nullptr);
      continue;
    }
    const Tensor& input = inputs[next++];
    const Value& value = graph_.value(id);
    if (input.dtype() != value.dtype) {
      return invalid_argument("input '{}' is {}; the graph expects {}",
                              value.name, dtype_name(input.dtype()),
                              dtype_name(value.dtype));
    }
    dims.push_back(input.dims());
    fed.push_back(&input);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  int64_t messages_before = context_.device->validation_messages();
  SEQRT_ASSIGN_OR_RETURN(std::shared_ptr<Prepared> prepared,
                         prepare(dims, fed));
  const MemoryPlan& plan = prepared->plan;
  // Each pair reads the buffer holding its state and writes the other one,
  // or the same one where it updates in place.
  std::vector<int> targets(pairs);
  std::vector<BufferSlice> places(2 * pairs);
  std::map<ValueId, BufferSlice> state_places;
  for (size_t p = 0; p < pairs; ++p) {
    const StatePair& pair = graph_.state_pairs[p];
    State::Slot& slot = held->slots[p];
    const VkDeviceSize out_bytes = plan.values[pair.output].bytes;
    targets[p] =
        updates_in_place(graph_, plan, pair) ? slot.current : 1 - slot.current;
    SEQRT_RETURN_IF_ERROR(held->reserve(slot, targets[p], out_bytes));
    places[p] = slot.slice(slot.current, slot.bytes);
    places[pairs + p] = slot.slice(targets[p], out_bytes);
    state_places[pair.input] = places[p];
    state_places[pair.output] = places[pairs + p];
  }
  State::Variant* variant = held->find(prepared.get(), places);
  if (variant == nullptr) {
    SEQRT_ASSIGN_OR_RETURN(std::unique_ptr<Recorded> recorded,
                           record(*prepared, state_places));
    if (held->variants.size() >= State::kMaxVariants) {
      held->variants.erase(std::min_element(
          held->variants.begin(), held->variants.end(),
          [](const State::Variant& a, const State::Variant& b) {
            return a.used < b.used;
          }));
    }
    held->variants.push_back({prepared, places, std::move(recorded), 0});
    variant = &held->variants.back();
  }
  variant->used = ++held->clock;
  std::vector<bool> kept(graph_.outputs.size(), false);
  for (size_t i = 0; i < graph_.outputs.size(); ++i) {
    kept[i] = state_places.count(graph_.outputs[i]) != 0;
  }
  SEQRT_ASSIGN_OR_RETURN(std::vector<Tensor> outputs,
                         execute(*prepared, *variant->recorded, fed, kept));
  for (size_t p = 0; p < pairs; ++p) {
    State::Slot& slot = held->slots[p];
    const ValuePlan& out = plan.values[graph_.state_pairs[p].output];
    slot.current = targets[p];
    slot.dims = out.dims;
    slot.bytes = out.bytes;
  }
  SEQRT_RETURN_IF_ERROR(check_validation(*context_.device, messages_before));
  return outputs;
}
}  // namespace seqrt::vulkan
