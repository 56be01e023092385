#include "backends/vulkan/scan.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "backends/vulkan/executable.h"
#include "backends/vulkan/kernels/kernel_util.h"
#include "backends/vulkan/record_node.h"

namespace seqrt::vulkan {
namespace {

const Graph* body_of(const Node& node) {
  const Attribute* attr = node.attr("body");
  if (attr == nullptr || attr->type() != AttrType::kGraph) return nullptr;
  return attr->as_graph().get();
}

std::vector<int64_t> ints_or(const Node& node, const char* name, size_t count) {
  const Attribute* attr = node.attr(name);
  if (attr == nullptr || attr->type() != AttrType::kInts) {
    return std::vector<int64_t>(count, 0);
  }
  return attr->as_ints();
}

int64_t scan_input_count(const Node& node) {
  const Attribute* m = node.attr("num_scan_inputs");
  if (m == nullptr || m->type() != AttrType::kInt) return -1;
  return m->as_int();
}

// Whether `axis` is axis 0 of a value of rank `rank` (-1: unknown).
bool leading_axis(int64_t axis, int64_t rank) {
  return axis == 0 || (rank > 0 && axis == -rank);
}

int64_t rank_of(const Value& value) {
  return value.shape ? static_cast<int64_t>(value.shape->rank()) : -1;
}

// Why the scanned values cannot be moved as whole-word slices along axis 0.
std::string slices_blocker(const Graph& graph, const Node& node,
                           const Graph& body, size_t states, size_t inputs,
                           size_t outputs) {
  const auto in_axes = ints_or(node, "scan_input_axes", inputs);
  const auto in_dirs = ints_or(node, "scan_input_directions", inputs);
  const auto out_axes = ints_or(node, "scan_output_axes", outputs);
  const auto out_dirs = ints_or(node, "scan_output_directions", outputs);
  if (in_axes.size() != inputs || in_dirs.size() != inputs ||
      out_axes.size() != outputs || out_dirs.size() != outputs) {
    return "its axes or directions do not match its scan inputs and outputs";
  }
  int64_t length = -1;
  for (size_t j = 0; j < inputs; ++j) {
    const Value& value = graph.value(node.inputs[states + j]);
    if (!leading_axis(in_axes[j], rank_of(value))) {
      return "a scan input runs along another axis than 0";
    }
    if (in_dirs[j] != 0 && in_dirs[j] != 1) return "a direction is not 0 or 1";
    if (dtype_size(value.dtype) % 4 != 0) {
      return "a scan input's elements are narrower than 4 bytes";
    }
    if (value.shape && value.shape->rank() > 0 &&
        (*value.shape)[0].is_fixed()) {
      const int64_t here = (*value.shape)[0].value();
      if (length >= 0 && here != length)
        return "its scan inputs' lengths differ";
      length = here;
    }
  }
  for (size_t k = 0; k < outputs; ++k) {
    const ValueId id = node.outputs[states + k];
    const int64_t rank = id == kNoValue ? -1 : rank_of(graph.value(id));
    if (!leading_axis(out_axes[k], rank)) {
      return "a scan output runs along another axis than 0";
    }
    if (out_dirs[k] != 0 && out_dirs[k] != 1)
      return "a direction is not 0 or 1";
    if (dtype_size(body.value(body.outputs[states + k]).dtype) % 4 != 0) {
      return "a scan output's elements are narrower than 4 bytes";
    }
  }
  return "";
}

// The words of one slice, or an error when it is not whole words.
Result<uint32_t> slice_words(const Node& node, int64_t bytes) {
  if (bytes < 0 || bytes % 4 != 0 || bytes / 4 > UINT32_MAX) {
    return internal_error("{}: a step's slice of {} bytes is not whole words",
                          node.label(), bytes);
  }
  return static_cast<uint32_t>(bytes / 4);
}

Status slice_copy(Recorder& recorder, const BufferSlice& counter,
                  const BufferSlice& src, const BufferSlice& dst,
                  uint32_t words, bool scatter, bool reverse, int64_t steps) {
  if (words == 0) return Status::ok();
  Dispatch dispatch;
  dispatch.shader = "scan_slice";
  dispatch.specialization = {kLocalSize};
  dispatch.push_constants =
      push_bytes({words, scatter ? 1u : 0u, reverse ? 1u : 0u,
                  static_cast<uint32_t>(steps)});
  dispatch.reads = {counter, src};
  dispatch.writes = {dst};
  dispatch.groups = groups_for(words, recorder.limits());
  return recorder.dispatch(dispatch);
}

// Places for the body plan's values: constants uploaded, transients in one
// arena, everything else (scan-input slots, outputs, views) its own memory.
// States and captures are left empty: the caller binds them.
Result<std::vector<BufferSlice>> place_body(const DeviceContext& context,
                                            const ScanBody& body,
                                            const Graph& graph,
                                            const MemoryPlan& plan,
                                            RecordedScan& scan) {
  Allocator& allocator = *context.allocator;
  const VkDeviceSize align = std::max<VkDeviceSize>(
      1, context.device->limits().storage_buffer_offset_alignment);
  auto own = [&](VkDeviceSize bytes,
                 const std::string& what) -> Result<BufferSlice> {
    SEQRT_ASSIGN_OR_RETURN(
        std::unique_ptr<Allocation> allocation,
        allocator.allocate(std::max<VkDeviceSize>(bytes, 4),
                           MemoryPlace::kDevice, what.c_str()));
    BufferSlice slice = allocation->slice();
    slice.bytes = bytes;
    scan.memory.push_back(std::move(allocation));
    return slice;
  };
  BufferSlice arena;
  if (plan.peak_arena_bytes > 0) {
    SEQRT_ASSIGN_OR_RETURN(arena,
                           own(static_cast<VkDeviceSize>(plan.peak_arena_bytes),
                               "allocating a Scan body's arena"));
  }
  std::set<ValueId> bound(graph.inputs.begin(),
                          graph.inputs.begin() + body.states);
  bound.insert(graph.inputs.end() - body.outer_captures.size(),
               graph.inputs.end());
  std::set<ValueId> io(graph.inputs.begin(), graph.inputs.end());
  io.insert(graph.outputs.begin(), graph.outputs.end());
  const std::vector<int> producers = graph.producers();
  std::vector<BufferSlice> places(plan.values.size());
  for (size_t i = 0; i < plan.values.size(); ++i) {
    const ValueId id = static_cast<ValueId>(i);
    const ValuePlan& value = plan.values[i];
    if (bound.count(id)) continue;
    if (value.kind == MemoryKind::kUnused && !io.count(id) &&
        producers[i] < 0) {
      continue;
    }
    const auto bytes =
        static_cast<VkDeviceSize>(std::max<int64_t>(value.bytes, 0));
    auto constant = body.constants.find(id);
    if (constant != body.constants.end()) {
      places[i] = constant->second->slice();
      places[i].bytes = bytes;
      continue;
    }
    const bool view = value.alias_of != kNoValue && !value.in_place;
    if (value.kind == MemoryKind::kArena && !view && !io.count(id) &&
        static_cast<VkDeviceSize>(value.offset) % align == 0) {
      places[i] = {arena.buffer,
                   arena.offset + static_cast<VkDeviceSize>(value.offset),
                   bytes};
      continue;
    }
    SEQRT_ASSIGN_OR_RETURN(
        places[i], own(bytes, fmt::format("allocating Scan body value '{}'",
                                          graph.values[i].name)));
  }
  return places;
}

// The body with its inputs' dims as the enclosing plan has them, planned.
Result<MemoryPlan> plan_body(const ScanBody& body, const ScanOuter& outer,
                             Graph& graph) {
  const Node& node = *outer.node;
  for (size_t i = 0; i < body.states + body.scan_inputs; ++i) {
    std::vector<int64_t> dims = outer.input_dims[i];
    if (i >= body.states) {
      if (dims.empty()) {
        return invalid_argument("{}: scan input {} is a scalar", node.label(),
                                i - body.states);
      }
      dims.erase(dims.begin());
    }
    graph.value(graph.inputs[i]).shape = Shape::from_dims(dims);
  }
  for (size_t c = 0; c < body.outer_captures.size(); ++c) {
    graph.value(graph.inputs[body.states + body.scan_inputs + c]).shape =
        Shape::from_dims(outer.capture_dims[c]);
  }
  Result<MemoryPlan> plan = plan_memory(graph, outer.bindings);
  if (!plan.is_ok()) return plan.status().with_context(node.label() + " body");
  for (size_t id = 0; id < plan->values.size(); ++id) {
    const ValuePlan& value = plan->values[id];
    if (value.kind == MemoryKind::kDynamic ||
        (value.kind != MemoryKind::kUnused && value.bytes < 0)) {
      return unsupported(
          "{}: body value '{}' has a size known only at run time; the Vulkan "
          "backend needs every size before recording",
          node.label(), graph.values[id].name);
    }
  }
  return plan;
}

}  // namespace

std::string loop_scan_blocker(const Graph& graph, const Node& node) {
  const Graph* body = body_of(node);
  if (body == nullptr) return "it has no body";
  const int64_t m = scan_input_count(node);
  if (m < 1 || static_cast<size_t>(m) > node.inputs.size()) {
    return "its num_scan_inputs is missing or out of range";
  }
  const size_t inputs = static_cast<size_t>(m);
  const size_t states = node.inputs.size() - inputs;
  if (node.outputs.size() < states ||
      body->inputs.size() != node.inputs.size() ||
      body->outputs.size() != node.outputs.size()) {
    return "its body's inputs or outputs do not match the node's";
  }
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (node.inputs[i] == kNoValue || graph.value(node.inputs[i]).dtype !=
                                          body->value(body->inputs[i]).dtype) {
      return "an input's type differs from the body's";
    }
  }
  const std::string slices = slices_blocker(graph, node, *body, states, inputs,
                                            node.outputs.size() - states);
  if (!slices.empty()) return slices;
  for (ValueId capture : body->captures) {
    if (graph.find_value(body->value(capture).name) == kNoValue) {
      return "its body captures '" + body->value(capture).name +
             "', which the enclosing graph does not have";
    }
  }
  return "";
}

Result<std::unique_ptr<ScanBody>> make_scan_body(const DeviceContext& context,
                                                 const Graph& graph,
                                                 const Node& node) {
  const std::string blocker = loop_scan_blocker(graph, node);
  if (!blocker.empty()) {
    return unsupported("{}: cannot run as a loop: {}", node.label(), blocker);
  }
  const Graph& source = *body_of(node);
  auto body = std::make_unique<ScanBody>();
  body->graph = source;
  body->scan_inputs = static_cast<size_t>(scan_input_count(node));
  body->states = node.inputs.size() - body->scan_inputs;
  body->scan_outputs = node.outputs.size() - body->states;
  for (int64_t d : ints_or(node, "scan_input_directions", body->scan_inputs)) {
    body->reverse_inputs.push_back(d == 1);
  }
  for (int64_t d :
       ints_or(node, "scan_output_directions", body->scan_outputs)) {
    body->reverse_outputs.push_back(d == 1);
  }
  for (ValueId capture : source.captures) {
    body->outer_captures.push_back(
        graph.find_value(source.value(capture).name));
    body->graph.inputs.push_back(capture);
  }
  body->graph.captures.clear();
  for (const auto& [id, tensor] : source.constants) {
    const std::string doing =
        fmt::format("uploading Scan body constant '{}'", source.value(id).name);
    SEQRT_ASSIGN_OR_RETURN(
        std::unique_ptr<Allocation> allocation,
        context.allocator->allocate(std::max<size_t>(tensor.byte_size(), 4),
                                    MemoryPlace::kDevice, doing.c_str()));
    SEQRT_RETURN_IF_ERROR(upload(context, allocation->slice(), tensor.data(),
                                 tensor.byte_size(), doing.c_str()));
    body->constants[id] = std::move(allocation);
  }
  return body;
}

Result<std::unique_ptr<RecordedScan>> record_scan(const DeviceContext& context,
                                                  const ScanBody& body,
                                                  const ScanOuter& outer) {
  const Node& node = *outer.node;
  auto scan = std::make_unique<RecordedScan>();
  scan->steps = -1;
  for (size_t j = 0; j < body.scan_inputs; ++j) {
    const auto& dims = outer.input_dims[body.states + j];
    const int64_t length = dims.empty() ? -1 : dims[0];
    if (scan->steps >= 0 && length != scan->steps) {
      return invalid_argument(
          "{}: scan inputs have lengths {} and {}; they must agree",
          node.label(), scan->steps, length);
    }
    scan->steps = length;
  }
  Graph graph = body.graph;
  SEQRT_ASSIGN_OR_RETURN(MemoryPlan plan, plan_body(body, outer, graph));
  SEQRT_ASSIGN_OR_RETURN(std::vector<BufferSlice> places,
                         place_body(context, body, graph, plan, *scan));
  for (size_t c = 0; c < body.outer_captures.size(); ++c) {
    places[graph.inputs[body.states + body.scan_inputs + c]] =
        outer.captures[c];
  }
  scan->body_nodes = static_cast<int>(graph.nodes.size());
  // Two buffers per state, and the step counter.
  for (size_t i = 0; i < body.states; ++i) {
    const ValuePlan& in = plan.values[graph.inputs[i]];
    const ValuePlan& out = plan.values[graph.outputs[i]];
    if (in.dims != out.dims || in.dtype != out.dtype) {
      return invalid_argument(
          "{}: state {} is {} ({}) before a step and {} ({}) after it",
          node.label(), i, dtype_name(in.dtype), fmt::join(in.dims, ","),
          dtype_name(out.dtype), fmt::join(out.dims, ","));
    }
    for (int p = 0; p < 2; ++p) {
      SEQRT_ASSIGN_OR_RETURN(
          std::unique_ptr<Allocation> buffer,
          context.allocator->allocate(
              std::max<VkDeviceSize>(static_cast<VkDeviceSize>(in.bytes), 4),
              MemoryPlace::kDevice, "allocating a Scan state buffer"));
      BufferSlice slice = buffer->slice();
      slice.bytes = static_cast<VkDeviceSize>(in.bytes);
      scan->states[p].push_back(slice);
      scan->memory.push_back(std::move(buffer));
    }
  }
  SEQRT_ASSIGN_OR_RETURN(
      std::unique_ptr<Allocation> counter,
      context.allocator->allocate(4, MemoryPlace::kDevice,
                                  "allocating a Scan step counter"));
  scan->counter = counter->slice();
  scan->counter.bytes = 4;
  scan->memory.push_back(std::move(counter));

  const std::vector<int> producers = graph.producers();
  const std::set<ValueId> graph_inputs(graph.inputs.begin(),
                                       graph.inputs.end());
  for (int p = 0; p < 2; ++p) {
    std::vector<BufferSlice> at = places;
    for (size_t i = 0; i < body.states; ++i) {
      at[graph.inputs[i]] = scan->states[p][i];
    }
    // A state output a body node makes is written straight into its
    // buffer; any other (an input handed on, a capture, a value that is
    // already another state) is copied there after the nodes.
    std::set<ValueId> claimed;
    std::vector<bool> copied(body.states, false);
    for (size_t i = 0; i < body.states; ++i) {
      const ValueId id = graph.outputs[i];
      if (producers[id] >= 0 && !graph_inputs.count(id) &&
          !body.constants.count(id) && claimed.insert(id).second) {
        at[id] = scan->states[1 - p][i];
      } else {
        copied[i] = true;
      }
    }
    CommandRecorder recorder(context.device, *context.pipelines,
                             *context.allocator);
    recorder.defer_error_word_zeroing();
    recorder.barrier();  // after the previous step's submission
    for (size_t j = 0; j < body.scan_inputs; ++j) {
      const ValueId id = graph.inputs[body.states + j];
      SEQRT_ASSIGN_OR_RETURN(uint32_t words,
                             slice_words(node, plan.values[id].bytes));
      SEQRT_RETURN_IF_ERROR(slice_copy(
          recorder, scan->counter, outer.inputs[body.states + j], at[id], words,
          false, body.reverse_inputs[j], scan->steps));
    }
    size_t seen = 0;
    for (int index : plan.schedule) {
      KernelTiling tiling;
      bool planned = false;
      Status status =
          record_node(graph, index, plan, at, {}, context.device->limits(),
                      recorder, tiling, planned);
      if (!status.is_ok()) return status.with_context(node.label() + " body");
      const auto& words = recorder.error_words();
      for (; seen < words.size(); ++seen) {
        scan->error_words.push_back(
            {words[seen].word,
             graph.nodes[index].label() + ": " + words[seen].problem});
      }
    }
    for (size_t i = 0; i < body.states; ++i) {
      if (copied[i]) {
        SEQRT_RETURN_IF_ERROR(
            recorder.copy(at[graph.outputs[i]], scan->states[1 - p][i]));
      }
    }
    for (size_t k = 0; k < body.scan_outputs; ++k) {
      const BufferSlice& dst = outer.outputs[body.states + k];
      if (dst.empty()) continue;  // an output the node does not give
      const ValueId id = graph.outputs[body.states + k];
      SEQRT_ASSIGN_OR_RETURN(uint32_t words,
                             slice_words(node, plan.values[id].bytes));
      if (dst.bytes != static_cast<VkDeviceSize>(scan->steps) * words * 4) {
        return internal_error(
            "{}: scan output {} holds {} bytes, not {} steps of {} words",
            node.label(), k, dst.bytes, scan->steps, words);
      }
      SEQRT_RETURN_IF_ERROR(slice_copy(recorder, scan->counter, at[id], dst,
                                       words, true, body.reverse_outputs[k],
                                       scan->steps));
    }
    Dispatch step;
    step.shader = "scan_counter";
    step.writes = {scan->counter};
    SEQRT_RETURN_IF_ERROR(recorder.dispatch(step));
    SEQRT_ASSIGN_OR_RETURN(scan->bodies[p], recorder.finish());
  }
  return scan;
}

Status record_scan_entry(const RecordedScan& scan, const ScanOuter& outer,
                         CommandRecorder& recorder) {
  SEQRT_RETURN_IF_ERROR(recorder.fill(scan.counter, 0));
  for (const auto& word : scan.error_words) {
    SEQRT_RETURN_IF_ERROR(recorder.fill(word.word, 0));
  }
  for (size_t i = 0; i < scan.states[0].size(); ++i) {
    SEQRT_RETURN_IF_ERROR(recorder.copy(outer.inputs[i], scan.states[0][i]));
  }
  return Status::ok();
}

Status record_scan_exit(const RecordedScan& scan, const ScanOuter& outer,
                        CommandRecorder& recorder) {
  const int last = static_cast<int>(scan.steps % 2);
  for (size_t i = 0; i < scan.states[last].size(); ++i) {
    if (outer.outputs[i].empty()) continue;
    SEQRT_RETURN_IF_ERROR(
        recorder.copy(scan.states[last][i], outer.outputs[i]));
  }
  return Status::ok();
}

}  // namespace seqrt::vulkan
