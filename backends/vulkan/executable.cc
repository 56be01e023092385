#include "backends/vulkan/executable.h"

#include <algorithm>
#include <cstring>
#include <set>

#include <fmt/format.h>

#include "backends/vulkan/executable_recording.h"
#include "backends/vulkan/kernels/kernel_util.h"
#include "backends/vulkan/record_node.h"
#include "backends/vulkan/scan.h"
#include "compiler/passes/half_weights.h"
#include "compiler/planner/bind_dims.h"

namespace seqrt::vulkan {

namespace {

std::atomic<uint64_t> process_to_device{0}, process_to_host{0};

void count_process(bool to_device, uint64_t bytes) {
  (to_device ? process_to_device : process_to_host) += bytes;
}

Status transfer(const DeviceContext& context, const BufferSlice& device,
                void* host, size_t bytes, bool to_device, const char* doing) {
  if (bytes == 0) return Status::ok();
  if (bytes > device.bytes) {
    return internal_error("vulkan: {}: {} bytes do not fit a {}-byte buffer",
                          doing, bytes, device.bytes);
  }
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
  count_process(to_device, bytes);
  return Status::ok();
}

// The sizes of the graph inputs' symbolic dims under `dims` (by input).
std::map<std::string, int64_t> bindings_from_dims(
    const Graph& graph, const std::vector<std::vector<int64_t>>& dims) {
  std::map<std::string, int64_t> bindings;
  for (size_t i = 0; i < graph.inputs.size() && i < dims.size(); ++i) {
    const Value& value = graph.value(graph.inputs[i]);
    if (!value.shape || value.shape->rank() != dims[i].size()) continue;
    for (size_t d = 0; d < value.shape->rank(); ++d) {
      const Dim& dim = (*value.shape)[d];
      if (dim.is_symbol()) bindings.emplace(dim.symbol_name(), dims[i][d]);
    }
  }
  return bindings;
}

// "[2, -1]": a host parameter's elements, for errors.
std::string tensor_values_string(const Tensor& tensor) {
  std::vector<std::string> parts;
  for (int64_t i = 0; i < tensor.num_elements(); ++i) {
    parts.push_back(is_integer(tensor.dtype())
                        ? std::to_string(tensor.element_i64(i))
                        : fmt::format("{}", tensor.element_f64(i)));
  }
  return fmt::format("[{}]", fmt::join(parts, ", "));
}

}  // namespace

// Validation messages seen during a run are errors (tests require none).
Status check_validation(const Device& device, int64_t before) {
  int64_t now = device.validation_messages();
  if (now == before) return Status::ok();
  std::vector<std::string> log = device.validation_log();
  return internal_error("vulkan: {} validation message(s); first: {}",
                        now - before, log.empty() ? "?" : log.front());
}

TransferCounts process_transfers() {
  return {process_to_device.load(), process_to_host.load()};
}

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
  const Graph& lowered = executable->graph_;
  // The graph inputs some kernel reads as a parameter (kernel_util.h).
  std::set<ValueId> parameters;
  for (const Node& node : lowered.nodes) {
    for (size_t index : parameter_inputs(node)) {
      if (index < node.inputs.size() &&
          is_host_parameter(lowered, node.inputs[index])) {
        parameters.insert(node.inputs[index]);
      }
    }
  }
  for (size_t i = 0; i < lowered.inputs.size(); ++i) {
    if (parameters.count(lowered.inputs[i])) {
      executable->host_parameters_.push_back(i);
    }
  }
  for (size_t i = 0; i < lowered.nodes.size(); ++i) {
    const Node& node = lowered.nodes[i];
    if (node.domain != kOnnxDomain || node.op != "Scan") continue;
    SEQRT_ASSIGN_OR_RETURN(executable->scan_bodies_[static_cast<int>(i)],
                           make_scan_body(executable->context_, lowered, node));
  }
  return executable;
}

void VulkanExecutable::count(bool to_device, uint64_t bytes) const {
  (to_device ? to_device_ : to_host_) += bytes;
}

Status VulkanExecutable::upload_constants() {
  if (context_.device->fp16_weights()) {
    half_weights_ = select_half_weights(graph_);
  }
  for (const auto& [id, given] : graph_.constants) {
    std::string doing =
        fmt::format("uploading constant '{}'", graph_.value(id).name);
    Tensor tensor = given;
    if (half_weights_.count(id)) {
      SEQRT_ASSIGN_OR_RETURN(tensor, to_half(given));
    }
    SEQRT_ASSIGN_OR_RETURN(
        std::unique_ptr<Allocation> allocation,
        context_.allocator->allocate(tensor.byte_size(), MemoryPlace::kDevice,
                                     doing.c_str()));
    SEQRT_RETURN_IF_ERROR(upload(context_, allocation->slice(), tensor.data(),
                                 tensor.byte_size(), doing.c_str()));
    count(true, tensor.byte_size());
    constants_[id] = std::move(allocation);
  }
  return Status::ok();
}

Result<std::shared_ptr<VulkanExecutable::Prepared>> VulkanExecutable::build(
    const std::map<std::string, int64_t>& bindings,
    std::map<ValueId, Tensor> host_values) const {
  auto prepared = std::make_shared<Prepared>();
  Result<MemoryPlan> plan_made = plan_memory(graph_, bindings, host_values);
  if (!plan_made.is_ok()) {
    if (host_values.empty()) return plan_made.status();
    std::vector<std::string> values;
    for (const auto& [id, tensor] : host_values) {
      values.push_back(fmt::format("'{}' = {}", graph_.value(id).name,
                                   tensor_values_string(tensor)));
    }
    return plan_made.status().with_context(
        fmt::format("with host parameters {}", fmt::join(values, ", ")));
  }
  prepared->plan = std::move(plan_made).value();
  prepared->host_values = std::move(host_values);
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
  // Values of no elements still bind a buffer (an empty set reduced).
  const bool any_arena = std::any_of(
      plan.values.begin(), plan.values.end(),
      [](const ValuePlan& value) { return value.kind == MemoryKind::kArena; });
  if (plan.peak_arena_bytes > 0 || any_arena) {
    SEQRT_ASSIGN_OR_RETURN(
        std::unique_ptr<Allocation> allocation,
        allocator.allocate(
            std::max<int64_t>(plan.peak_arena_bytes, kArenaAlignment),
            MemoryPlace::kDevice, "allocating the arena"));
    arena = allocation->slice();
    prepared->memory.push_back(std::move(allocation));
  }
  std::set<ValueId> inputs(graph_.inputs.begin(), graph_.inputs.end());
  std::set<ValueId> outputs(graph_.outputs.begin(), graph_.outputs.end());
  // An output nobody reads still needs somewhere to go.
  std::set<ValueId> produced;
  for (const Node& node : graph_.nodes) {
    for (ValueId id : node.outputs) {
      if (id != kNoValue) produced.insert(id);
    }
  }
  prepared->places.resize(plan.values.size());
  for (size_t i = 0; i < plan.values.size(); ++i) {
    ValueId id = static_cast<ValueId>(i);
    const ValuePlan& value = plan.values[i];
    if (value.kind == MemoryKind::kUnused && !inputs.count(id) &&
        !produced.count(id)) {
      continue;
    }
    VkDeviceSize bytes =
        static_cast<VkDeviceSize>(std::max<int64_t>(value.bytes, 0));
    auto constant = constants_.find(id);
    if (constant != constants_.end()) {
      BufferSlice slice = constant->second->slice();
      slice.bytes = half_weights_.count(id) ? bytes / 2 : bytes;
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
    // Io values, views (their op copies), unaligned slice views and unread
    // outputs get memory of their own.
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
  return prepared;
}

Result<std::unique_ptr<VulkanExecutable::Recorded>> VulkanExecutable::record(
    Prepared& prepared,
    const std::map<ValueId, BufferSlice>& state_places) const {
  auto recorded = std::make_unique<Recorded>();
  const MemoryPlan& plan = prepared.plan;
  std::vector<BufferSlice> places = prepared.places;
  for (const auto& [id, slice] : state_places) places[id] = slice;
  auto stage = [&](VkDeviceSize at, VkDeviceSize bytes) {
    BufferSlice slice = prepared.staging->slice();
    slice.offset += at;
    slice.bytes = bytes;
    return slice;
  };

  auto recorder = std::make_unique<CommandRecorder>(
      context_.device, *context_.pipelines, *context_.allocator);
  // The previous run wrote and read the state buffers in its own
  // submission; a barrier orders this one after it.
  if (!state_places.empty()) recorder->barrier();
  for (size_t i = 0; i < graph_.inputs.size(); ++i) {
    if (state_places.count(graph_.inputs[i])) continue;
    const BufferSlice& place = places[graph_.inputs[i]];
    SEQRT_RETURN_IF_ERROR(
        recorder->copy(stage(prepared.input_at[i], place.bytes), place));
  }
  const DeviceLimits& limits = context_.device->limits();
  for (int index : plan.schedule) {
    if (scan_bodies_.count(index)) {
      SEQRT_RETURN_IF_ERROR(
          record_loop_scan(index, prepared, places, recorder, *recorded));
      continue;
    }
    KernelTiling tiling;
    bool planned = false;
    SEQRT_RETURN_IF_ERROR(record_node(graph_, index, plan, places,
                                      half_weights_, limits, *recorder, tiling,
                                      planned, &prepared.host_values));
    if (planned) recorded->tilings.push_back({index, std::move(tiling)});
    take_error_words(*recorder, index, *recorded);
  }
  for (size_t i = 0; i < graph_.outputs.size(); ++i) {
    if (state_places.count(graph_.outputs[i])) continue;
    const BufferSlice& place = places[graph_.outputs[i]];
    SEQRT_RETURN_IF_ERROR(
        recorder->copy(place, stage(prepared.output_at[i], place.bytes)));
  }
  SEQRT_RETURN_IF_ERROR(record_error_copies(*recorder, *recorded));
  SEQRT_RETURN_IF_ERROR(finish_program(recorder, *recorded, false));
  return recorded;
}

void VulkanExecutable::take_error_words(const CommandRecorder& recorder,
                                        int index, Recorded& recorded) const {
  const auto& words = recorder.error_words();
  for (; recorded.words_taken < words.size(); ++recorded.words_taken) {
    const auto& word = words[recorded.words_taken];
    recorded.error_words.push_back(word.word);
    recorded.error_nodes.push_back(index);
    recorded.error_problems.push_back(word.problem);
  }
}

Status VulkanExecutable::finish_program(
    std::unique_ptr<CommandRecorder>& recorder, Recorded& recorded,
    bool next) const {
  SEQRT_ASSIGN_OR_RETURN(std::unique_ptr<Program> program, recorder->finish());
  recorded.submission.push_back(program->commands());
  recorded.programs.push_back(std::move(program));
  recorder.reset();
  recorded.words_taken = 0;
  if (next) {
    recorder = std::make_unique<CommandRecorder>(
        context_.device, *context_.pipelines, *context_.allocator);
    // Orders this program after the previous submitted command buffer.
    recorder->barrier();
  }
  return Status::ok();
}

Status VulkanExecutable::record_loop_scan(
    int index, const Prepared& prepared, const std::vector<BufferSlice>& places,
    std::unique_ptr<CommandRecorder>& recorder, Recorded& recorded) const {
  const Node& node = graph_.nodes[index];
  const ScanBody& body = *scan_bodies_.at(index);
  ScanOuter outer;
  outer.node = &node;
  outer.bindings = prepared.plan.dim_bindings;
  for (ValueId id : node.inputs) {
    outer.inputs.push_back(places[id]);
    outer.input_dims.push_back(prepared.plan.values[id].dims);
  }
  for (ValueId id : node.outputs) {
    outer.outputs.push_back(id == kNoValue ? BufferSlice{} : places[id]);
  }
  for (ValueId id : body.outer_captures) {
    outer.captures.push_back(places[id]);
    outer.capture_dims.push_back(prepared.plan.values[id].dims);
  }
  SEQRT_ASSIGN_OR_RETURN(std::unique_ptr<RecordedScan> scan,
                         record_scan(context_, body, outer));
  SEQRT_RETURN_IF_ERROR(record_scan_entry(*scan, outer, *recorder));
  for (const auto& word : scan->error_words) {
    recorded.error_words.push_back(word.word);
    recorded.error_nodes.push_back(index);
    recorded.error_problems.push_back(word.problem);
  }
  SEQRT_RETURN_IF_ERROR(finish_program(recorder, recorded, true));
  for (int64_t t = 0; t < scan->steps; ++t) {
    recorded.submission.push_back(scan->bodies[t % 2]->commands());
  }
  SEQRT_RETURN_IF_ERROR(record_scan_exit(*scan, outer, *recorder));
  recorded.scans.push_back(std::move(scan));
  return Status::ok();
}

Status VulkanExecutable::record_error_copies(CommandRecorder& recorder,
                                             Recorded& recorded) const {
  const auto& words = recorded.error_words;
  if (words.empty()) return Status::ok();
  SEQRT_ASSIGN_OR_RETURN(
      recorded.error_staging,
      context_.allocator->allocate(4 * words.size(), MemoryPlace::kStaging,
                                   "allocating staging for error words"));
  for (size_t i = 0; i < words.size(); ++i) {
    BufferSlice slot = recorded.error_staging->slice();
    slot.offset += 4 * i;
    slot.bytes = 4;
    SEQRT_RETURN_IF_ERROR(recorder.copy(words[i], slot));
  }
  return Status::ok();
}

Status VulkanExecutable::check_error_words(const Recorded& recorded) const {
  if (recorded.error_staging == nullptr) return Status::ok();
  const auto* words =
      static_cast<const uint32_t*>(recorded.error_staging->mapped());
  for (size_t i = 0; i < recorded.error_nodes.size(); ++i) {
    if (words[i] != 0) {
      return invalid_argument("{}: {}",
                              graph_.nodes[recorded.error_nodes[i]].label(),
                              recorded.error_problems[i]);
    }
  }
  return Status::ok();
}

Result<std::vector<uint8_t>> VulkanExecutable::host_key(
    const std::vector<const Tensor*>& fed) const {
  std::vector<uint8_t> key;
  for (size_t i : host_parameters_) {
    const Tensor* tensor = i < fed.size() ? fed[i] : nullptr;
    if (tensor == nullptr) continue;
    if (tensor->num_elements() > kMaxHostParameterElements) {
      return invalid_argument(
          "input '{}' has {} elements; the Vulkan backend reads it on the "
          "host as a parameter, which takes at most {}",
          graph_.value(graph_.inputs[i]).name, tensor->num_elements(),
          kMaxHostParameterElements);
    }
    const auto* bytes = static_cast<const uint8_t*>(tensor->data());
    key.insert(key.end(), bytes, bytes + tensor->byte_size());
  }
  return key;
}

Result<std::shared_ptr<VulkanExecutable::Prepared>> VulkanExecutable::prepare(
    const std::vector<std::vector<int64_t>>& dims,
    const std::vector<const Tensor*>& fed) const {
  SEQRT_ASSIGN_OR_RETURN(std::vector<uint8_t> values, host_key(fed));
  Key key{dims, std::move(values)};
  auto found = prepared_.find(key);
  if (found != prepared_.end()) {
    found->second->used = ++clock_;
    return found->second;
  }
  std::map<ValueId, Tensor> host_values;
  for (size_t i : host_parameters_) {
    if (i < fed.size() && fed[i] != nullptr) {
      host_values.emplace(graph_.inputs[i], *fed[i]);
    }
  }
  std::map<std::string, int64_t> bindings = dim_bindings_;
  // Dims bound at compile stay bound (control flow may have been written
  // out for them): an input that disagrees fails the check below.
  for (const auto& [name, size] : bindings_from_dims(graph_, dims)) {
    bindings.emplace(name, size);
  }
  SEQRT_ASSIGN_OR_RETURN(std::shared_ptr<Prepared> prepared,
                         build(bindings, std::move(host_values)));
  for (size_t i = 0; i < graph_.inputs.size(); ++i) {
    const ValuePlan& value = prepared->plan.values[graph_.inputs[i]];
    if (value.dims != dims[i]) {
      return invalid_argument(
          "input '{}' has dims ({}); the graph expects ({})",
          graph_.value(graph_.inputs[i]).name, fmt::join(dims[i], ","),
          fmt::join(value.dims, ","));
    }
  }
  // Bounded: a parameter that changes every run re-records each time but
  // keeps only the most recent recordings (a State's variants hold theirs).
  if (prepared_.size() >= kMaxRecordings) {
    prepared_.erase(std::min_element(prepared_.begin(), prepared_.end(),
                                     [](const auto& a, const auto& b) {
                                       return a.second->used < b.second->used;
                                     }));
  }
  prepared->used = ++clock_;
  prepared_[key] = prepared;
  return prepared;
}

Result<std::vector<Tensor>> VulkanExecutable::execute(
    const Prepared& prepared, const Recorded& recorded,
    const std::vector<const Tensor*>& fed,
    const std::vector<bool>& kept) const {
  uint8_t* staging = static_cast<uint8_t*>(prepared.staging->mapped());
  for (size_t i = 0; i < fed.size(); ++i) {
    if (fed[i] == nullptr) continue;
    std::memcpy(staging + prepared.input_at[i], fed[i]->data(),
                fed[i]->byte_size());
    count(true, fed[i]->byte_size());
    count_process(true, fed[i]->byte_size());
  }
  SEQRT_RETURN_IF_ERROR(context_.device->submit_and_wait(recorded.submission,
                                                         "running the graph"));
  SEQRT_RETURN_IF_ERROR(check_error_words(recorded));
  std::vector<Tensor> outputs;
  for (size_t i = 0; i < graph_.outputs.size(); ++i) {
    if (kept[i]) continue;
    ValueId id = graph_.outputs[i];
    SEQRT_ASSIGN_OR_RETURN(Tensor output,
                           Tensor::allocate(graph_.value(id).dtype,
                                            prepared.plan.values[id].dims));
    std::memcpy(output.mutable_data(), staging + prepared.output_at[i],
                output.byte_size());
    count(false, output.byte_size());
    count_process(false, output.byte_size());
    outputs.push_back(std::move(output));
  }
  return outputs;
}

Result<std::vector<Tensor>> VulkanExecutable::run(
    std::vector<Tensor> inputs) const {
  if (inputs.size() != graph_.inputs.size()) {
    return invalid_argument("the graph takes {} input(s), got {}",
                            graph_.inputs.size(), inputs.size());
  }
  std::vector<std::vector<int64_t>> dims;
  std::vector<const Tensor*> fed;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value& value = graph_.value(graph_.inputs[i]);
    if (inputs[i].dtype() != value.dtype) {
      return invalid_argument("input '{}' is {}; the graph expects {}",
                              value.name, dtype_name(inputs[i].dtype()),
                              dtype_name(value.dtype));
    }
    dims.push_back(inputs[i].dims());
    fed.push_back(&inputs[i]);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  int64_t messages_before = context_.device->validation_messages();
  SEQRT_ASSIGN_OR_RETURN(std::shared_ptr<Prepared> prepared,
                         prepare(dims, fed));
  if (prepared->recorded == nullptr) {
    SEQRT_ASSIGN_OR_RETURN(prepared->recorded, record(*prepared, {}));
    ++recordings_made_;
  }
  SEQRT_ASSIGN_OR_RETURN(
      std::vector<Tensor> outputs,
      execute(*prepared, *prepared->recorded, fed,
              std::vector<bool>(graph_.outputs.size(), false)));
  SEQRT_RETURN_IF_ERROR(check_validation(*context_.device, messages_before));
  return outputs;
}

}  // namespace seqrt::vulkan
