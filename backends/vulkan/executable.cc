#include "backends/vulkan/executable.h"

#include <cstring>
#include <set>

#include <fmt/format.h>

#include "graph/planner/bind_dims.h"

namespace seqrt::vulkan {

// Everything one signature of input dims needs, recorded once.
struct VulkanExecutable::Prepared {
  MemoryPlan plan;
  std::vector<std::unique_ptr<Allocation>> memory;  // arena, io, own values
  std::vector<BufferSlice> places;                  // by ValueId
  std::unique_ptr<Allocation> staging;
  std::vector<VkDeviceSize> input_at, output_at;  // offsets in staging
  std::vector<NodeTiling> tilings;
  // Error words (Recorder::error_word) copied out after every run: word i
  // is set when node error_nodes[i] found `error_problems[i]`.
  std::unique_ptr<Allocation> error_staging;
  std::vector<int> error_nodes;
  std::vector<std::string> error_problems;
  std::unique_ptr<Program> program;
};

namespace {

Status transfer(const DeviceContext& context, const BufferSlice& device,
                void* host, size_t bytes, bool to_device, const char* doing) {
  if (bytes == 0) return Status::ok();
  SEQRT_ASSIGN_OR_RETURN(
      std::unique_ptr<Allocation> staging,
      context.allocator->allocate(bytes, MemoryPlace::kStaging, doing));
  BufferSlice stage = staging->slice();
  stage.bytes = bytes;
  BufferSlice target = device;
  target.bytes = bytes;
  if (to_device) std::memcpy(staging->mapped(), host, bytes);
  CommandRecorder recorder(context.device, *context.pipelines,
                           *context.allocator);
  SEQRT_RETURN_IF_ERROR(to_device ? recorder.copy(stage, target)
                                  : recorder.copy(target, stage));
  SEQRT_ASSIGN_OR_RETURN(std::unique_ptr<Program> program, recorder.finish());
  SEQRT_RETURN_IF_ERROR(program->run(doing));
  if (!to_device) std::memcpy(host, staging->mapped(), bytes);
  return Status::ok();
}

// Validation messages seen during a run are errors (tests require none).
Status check_validation(const Device& device, int64_t before) {
  int64_t now = device.validation_messages();
  if (now == before) return Status::ok();
  std::vector<std::string> log = device.validation_log();
  return internal_error("vulkan: {} validation message(s); first: {}",
                        now - before, log.empty() ? "?" : log.front());
}

}  // namespace

Status upload(const DeviceContext& context, const BufferSlice& dst,
              const void* data, size_t bytes, const char* doing) {
  return transfer(context, dst, const_cast<void*>(data), bytes, true, doing);
}

Status download(const DeviceContext& context, const BufferSlice& src,
                void* data, size_t bytes, const char* doing) {
  return transfer(context, src, data, bytes, false, doing);
}

VulkanExecutable::VulkanExecutable(DeviceContext context, Graph graph,
                                   const CompileOptions& options)
    : context_(std::move(context)),
      graph_(std::move(graph)),
      dim_bindings_(options.dim_bindings) {}

VulkanExecutable::~VulkanExecutable() = default;

Result<std::unique_ptr<VulkanExecutable>> VulkanExecutable::create(
    DeviceContext context, Graph graph, const CompileOptions& options) {
  std::unique_ptr<VulkanExecutable> executable(
      new VulkanExecutable(std::move(context), std::move(graph), options));
  SEQRT_RETURN_IF_ERROR(executable->upload_constants());
  return executable;
}

Status VulkanExecutable::upload_constants() {
  for (const auto& [id, tensor] : graph_.constants) {
    std::string doing =
        fmt::format("uploading constant '{}'", graph_.value(id).name);
    SEQRT_ASSIGN_OR_RETURN(
        std::unique_ptr<Allocation> allocation,
        context_.allocator->allocate(tensor.byte_size(), MemoryPlace::kDevice,
                                     doing.c_str()));
    SEQRT_RETURN_IF_ERROR(upload(context_, allocation->slice(), tensor.data(),
                                 tensor.byte_size(), doing.c_str()));
    constants_[id] = std::move(allocation);
  }
  return Status::ok();
}

Result<std::shared_ptr<VulkanExecutable::Prepared>> VulkanExecutable::build(
    const std::map<std::string, int64_t>& bindings) const {
  auto prepared = std::make_shared<Prepared>();
  SEQRT_ASSIGN_OR_RETURN(prepared->plan, plan_memory(graph_, bindings));
  const MemoryPlan& plan = prepared->plan;
  Allocator& allocator = *context_.allocator;
  const VkDeviceSize align = std::max<VkDeviceSize>(
      1, context_.device->limits().storage_buffer_offset_alignment);
  for (size_t id = 0; id < plan.values.size(); ++id) {
    if (plan.values[id].kind == MemoryKind::kDynamic ||
        (plan.values[id].kind != MemoryKind::kUnused &&
         plan.values[id].bytes < 0)) {
      return unsupported(
          "vulkan: value '{}' has a size known only at run time "
          "(data-dependent shape); the Vulkan backend needs every size "
          "before recording",
          graph_.values[id].name);
    }
  }
  BufferSlice arena;
  if (plan.peak_arena_bytes > 0) {
    SEQRT_ASSIGN_OR_RETURN(
        std::unique_ptr<Allocation> allocation,
        allocator.allocate(plan.peak_arena_bytes, MemoryPlace::kDevice,
                           "allocating the arena"));
    arena = allocation->slice();
    prepared->memory.push_back(std::move(allocation));
  }
  std::set<ValueId> inputs(graph_.inputs.begin(), graph_.inputs.end());
  std::set<ValueId> outputs(graph_.outputs.begin(), graph_.outputs.end());
  prepared->places.resize(plan.values.size());
  for (size_t i = 0; i < plan.values.size(); ++i) {
    ValueId id = static_cast<ValueId>(i);
    const ValuePlan& value = plan.values[i];
    if (value.kind == MemoryKind::kUnused && !inputs.count(id)) continue;
    VkDeviceSize bytes =
        static_cast<VkDeviceSize>(std::max<int64_t>(value.bytes, 0));
    auto constant = constants_.find(id);
    if (constant != constants_.end()) {
      BufferSlice slice = constant->second->slice();
      slice.bytes = bytes;
      prepared->places[i] = slice;
      continue;
    }
    bool view = value.alias_of != kNoValue && !value.in_place;
    if (value.kind == MemoryKind::kArena && !view &&
        static_cast<VkDeviceSize>(value.offset) % align == 0 &&
        !inputs.count(id) && !outputs.count(id)) {
      prepared->places[i] = {
          arena.buffer, arena.offset + static_cast<VkDeviceSize>(value.offset),
          bytes};
      continue;
    }
    // Io values, views (their op copies) and unaligned slice views get
    // memory of their own.
    std::string doing =
        fmt::format("allocating value '{}'", graph_.values[i].name);
    SEQRT_ASSIGN_OR_RETURN(
        std::unique_ptr<Allocation> allocation,
        allocator.allocate(bytes, MemoryPlace::kDevice, doing.c_str()));
    BufferSlice slice = allocation->slice();
    slice.bytes = bytes;
    prepared->places[i] = slice;
    prepared->memory.push_back(std::move(allocation));
  }
  // Staging: every input, then every output, each aligned.
  VkDeviceSize staging_bytes = 0;
  auto reserve = [&](ValueId id) {
    VkDeviceSize at = staging_bytes;
    staging_bytes += (prepared->places[id].bytes + 63) / 64 * 64;
    return at;
  };
  for (ValueId id : graph_.inputs) prepared->input_at.push_back(reserve(id));
  for (ValueId id : graph_.outputs) prepared->output_at.push_back(reserve(id));
  SEQRT_ASSIGN_OR_RETURN(
      prepared->staging,
      allocator.allocate(staging_bytes, MemoryPlace::kStaging,
                         "allocating staging memory for inputs and outputs"));
  auto stage = [&](VkDeviceSize at, VkDeviceSize bytes) {
    BufferSlice slice = prepared->staging->slice();
    slice.offset += at;
    slice.bytes = bytes;
    return slice;
  };

  CommandRecorder recorder(context_.device, *context_.pipelines, allocator);
  for (size_t i = 0; i < graph_.inputs.size(); ++i) {
    const BufferSlice& place = prepared->places[graph_.inputs[i]];
    SEQRT_RETURN_IF_ERROR(
        recorder.copy(stage(prepared->input_at[i], place.bytes), place));
  }
  const DeviceLimits& limits = context_.device->limits();
  for (int index : plan.schedule) {
    const Node& node = graph_.nodes[index];
    const VulkanKernel* kernel = kernel_table().find(node.domain, node.op);
    if (kernel == nullptr) {
      return unsupported("{}: the Vulkan backend has no kernel for this op",
                         node.label());
    }
    NodeArgs args;
    args.graph = &graph_;
    args.node = &node;
    for (ValueId id : node.inputs) {
      args.inputs.push_back(id == kNoValue ? BufferSlice{}
                                           : prepared->places[id]);
      args.input_dims.push_back(id == kNoValue ? std::vector<int64_t>{}
                                               : plan.values[id].dims);
      args.input_dtypes.push_back(id == kNoValue ? DType::kUndefined
                                                 : graph_.values[id].dtype);
    }
    for (ValueId id : node.outputs) {
      if (id != kNoValue && prepared->places[id].empty()) {
        // An output nobody reads still needs somewhere to go.
        SEQRT_ASSIGN_OR_RETURN(
            std::unique_ptr<Allocation> allocation,
            allocator.allocate(std::max<int64_t>(plan.values[id].bytes, 0),
                               MemoryPlace::kDevice,
                               "allocating an unread output"));
        prepared->places[id] = allocation->slice();
        prepared->places[id].bytes =
            std::max<int64_t>(plan.values[id].bytes, 0);
        prepared->memory.push_back(std::move(allocation));
      }
      args.outputs.push_back(id == kNoValue ? BufferSlice{}
                                            : prepared->places[id]);
      args.output_dims.push_back(id == kNoValue ? std::vector<int64_t>{}
                                                : plan.values[id].dims);
      args.output_dtypes.push_back(id == kNoValue ? DType::kUndefined
                                                  : graph_.values[id].dtype);
    }
    KernelTiling tiling;
    if (kernel->plan) {
      Result<KernelTiling> planned = kernel->plan(args, limits);
      if (!planned.is_ok()) {
        return planned.status().with_context("planning " + node.label());
      }
      tiling = std::move(planned).value();
      prepared->tilings.push_back({index, tiling});
    }
    Status recorded = kernel->record(args, tiling, recorder);
    if (!recorded.is_ok()) {
      return recorded.with_context("recording " + node.label());
    }
    prepared->error_nodes.resize(recorder.error_words().size(), index);
  }
  for (size_t i = 0; i < graph_.outputs.size(); ++i) {
    const BufferSlice& place = prepared->places[graph_.outputs[i]];
    SEQRT_RETURN_IF_ERROR(
        recorder.copy(place, stage(prepared->output_at[i], place.bytes)));
  }
  SEQRT_RETURN_IF_ERROR(record_error_copies(recorder, *prepared));
  SEQRT_ASSIGN_OR_RETURN(prepared->program, recorder.finish());
  return prepared;
}

Status VulkanExecutable::record_error_copies(CommandRecorder& recorder,
                                             Prepared& prepared) const {
  const auto& words = recorder.error_words();
  if (words.empty()) return Status::ok();
  SEQRT_ASSIGN_OR_RETURN(
      prepared.error_staging,
      context_.allocator->allocate(4 * words.size(), MemoryPlace::kStaging,
                                   "allocating staging for error words"));
  for (size_t i = 0; i < words.size(); ++i) {
    BufferSlice slot = prepared.error_staging->slice();
    slot.offset += 4 * i;
    slot.bytes = 4;
    SEQRT_RETURN_IF_ERROR(recorder.copy(words[i].word, slot));
    prepared.error_problems.push_back(words[i].problem);
  }
  return Status::ok();
}

Status VulkanExecutable::check_error_words(const Prepared& prepared) const {
  if (prepared.error_staging == nullptr) return Status::ok();
  const auto* words =
      static_cast<const uint32_t*>(prepared.error_staging->mapped());
  for (size_t i = 0; i < prepared.error_nodes.size(); ++i) {
    if (words[i] != 0) {
      return invalid_argument("{}: {}",
                              graph_.nodes[prepared.error_nodes[i]].label(),
                              prepared.error_problems[i]);
    }
  }
  return Status::ok();
}

Result<std::shared_ptr<VulkanExecutable::Prepared>> VulkanExecutable::prepare(
    const std::vector<Tensor>& inputs) const {
  std::vector<std::vector<int64_t>> signature;
  for (const Tensor& input : inputs) signature.push_back(input.dims());
  auto found = prepared_.find(signature);
  if (found != prepared_.end()) return found->second;
  std::map<std::string, int64_t> bindings = dim_bindings_;
  for (const auto& [name, size] : bindings_from_inputs(graph_, inputs)) {
    bindings[name] = size;
  }
  SEQRT_ASSIGN_OR_RETURN(std::shared_ptr<Prepared> prepared, build(bindings));
  for (size_t i = 0; i < graph_.inputs.size(); ++i) {
    const ValuePlan& value = prepared->plan.values[graph_.inputs[i]];
    if (value.dims != inputs[i].dims()) {
      return invalid_argument(
          "input '{}' has dims ({}); the graph expects ({})",
          graph_.value(graph_.inputs[i]).name, fmt::join(inputs[i].dims(), ","),
          fmt::join(value.dims, ","));
    }
  }
  prepared_[signature] = prepared;
  return prepared;
}

Result<std::vector<Tensor>> VulkanExecutable::run(
    std::vector<Tensor> inputs) const {
  if (inputs.size() != graph_.inputs.size()) {
    return invalid_argument("the graph takes {} input(s), got {}",
                            graph_.inputs.size(), inputs.size());
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value& value = graph_.value(graph_.inputs[i]);
    if (inputs[i].dtype() != value.dtype) {
      return invalid_argument("input '{}' is {}; the graph expects {}",
                              value.name, dtype_name(inputs[i].dtype()),
                              dtype_name(value.dtype));
    }
  }
  std::lock_guard<std::mutex> lock(mutex_);
  int64_t messages_before = context_.device->validation_messages();
  SEQRT_ASSIGN_OR_RETURN(std::shared_ptr<Prepared> prepared, prepare(inputs));
  uint8_t* staging = static_cast<uint8_t*>(prepared->staging->mapped());
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::memcpy(staging + prepared->input_at[i], inputs[i].data(),
                inputs[i].byte_size());
  }
  SEQRT_RETURN_IF_ERROR(prepared->program->run("running the graph"));
  SEQRT_RETURN_IF_ERROR(check_error_words(*prepared));
  std::vector<Tensor> outputs;
  for (size_t i = 0; i < graph_.outputs.size(); ++i) {
    ValueId id = graph_.outputs[i];
    SEQRT_ASSIGN_OR_RETURN(Tensor output,
                           Tensor::allocate(graph_.value(id).dtype,
                                            prepared->plan.values[id].dims));
    std::memcpy(output.mutable_data(), staging + prepared->output_at[i],
                output.byte_size());
    outputs.push_back(std::move(output));
  }
  SEQRT_RETURN_IF_ERROR(check_validation(*context_.device, messages_before));
  return outputs;
}

Result<std::vector<VulkanExecutable::NodeTiling>> VulkanExecutable::tilings(
    const std::map<std::string, int64_t>& bindings) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::map<std::string, int64_t> all = dim_bindings_;
  for (const auto& [name, size] : bindings) all[name] = size;
  SEQRT_ASSIGN_OR_RETURN(std::shared_ptr<Prepared> prepared, build(all));
  return prepared->tilings;
}

Result<std::vector<KernelPlanEntry>> VulkanExecutable::kernel_plan(
    const std::map<std::string, int64_t>& bindings) const {
  SEQRT_ASSIGN_OR_RETURN(std::vector<NodeTiling> nodes, tilings(bindings));
  std::vector<KernelPlanEntry> entries;
  for (const NodeTiling& node : nodes) {
    const KernelTiling& tiling = node.tiling;
    const Node& graph_node = graph_.nodes[node.node];
    entries.push_back({graph_node.name, graph_node.op, tiling.summary,
                       tiling.state_place, tiling.shared_bytes,
                       tiling.shared_limit});
  }
  return entries;
}

int VulkanExecutable::programs_recorded() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<int>(prepared_.size());
}

}  // namespace seqrt::vulkan
