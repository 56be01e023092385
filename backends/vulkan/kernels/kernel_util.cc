#include "backends/vulkan/kernels/kernel_util.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <set>

namespace seqrt::vulkan {

std::vector<int64_t> row_major_strides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i) {
    strides[i] = strides[i + 1] * dims[i + 1];
  }
  return strides;
}

std::vector<int64_t> broadcast_strides(const std::vector<int64_t>& dims,
                                       const std::vector<int64_t>& out_dims) {
  std::vector<int64_t> own = row_major_strides(dims);
  std::vector<int64_t> strides(out_dims.size(), 0);
  size_t shift = out_dims.size() - dims.size();
  for (size_t i = 0; i < dims.size(); ++i) {
    strides[i + shift] = dims[i] == 1 ? 0 : own[i];
  }
  return strides;
}

int64_t element_count(const std::vector<int64_t>& dims) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  return count;
}

std::array<uint32_t, 3> groups_for(int64_t count, const DeviceLimits& limits) {
  return groups_for_rows((count + kLocalSize - 1) / kLocalSize, limits);
}

std::array<uint32_t, 3> groups_for_rows(int64_t groups,
                                        const DeviceLimits& limits) {
  int64_t max_x =
      limits.max_group_count[0] == 0 ? 65535 : limits.max_group_count[0];
  if (groups <= max_x) return {static_cast<uint32_t>(groups), 1, 1};
  int64_t y = (groups + max_x - 1) / max_x;
  return {static_cast<uint32_t>(max_x), static_cast<uint32_t>(y), 1};
}

int64_t normalized_axis(int64_t axis, size_t rank) {
  return axis < 0 ? axis + static_cast<int64_t>(rank) : axis;
}

Status require_f32(const Graph& graph, const Node& node) {
  for (ValueId id : node.inputs) {
    if (id != kNoValue && graph.value(id).dtype != DType::kF32) {
      return unsupported("{}: input '{}' is {}; the Vulkan kernel takes f32",
                         node.label(), graph.value(id).name,
                         dtype_name(graph.value(id).dtype));
    }
  }
  for (ValueId id : node.outputs) {
    if (id != kNoValue && graph.value(id).dtype != DType::kF32) {
      return unsupported("{}: output '{}' is {}; the Vulkan kernel makes f32",
                         node.label(), graph.value(id).name,
                         dtype_name(graph.value(id).dtype));
    }
  }
  return Status::ok();
}

ElementLayout element_layout(DType dtype) {
  ElementLayout layout;
  layout.words = element_words(dtype);
  layout.part_bytes = static_cast<uint32_t>(dtype_size(dtype));
  return layout;
}

Status require_movable(const Graph& graph, const Node& node, ValueId id) {
  DType dtype = graph.value(id).dtype;
  for (DType movable :
       {DType::kF32, DType::kI32, DType::kI64, DType::kBool, DType::kF16}) {
    if (dtype == movable) return Status::ok();
  }
  return unsupported(
      "{}: '{}' is {}; the Vulkan kernel takes f32, i32, i64, bool or f16",
      node.label(), graph.value(id).name, dtype_name(dtype));
}

uint32_t element_words(DType dtype) {
  size_t size = dtype_size(dtype);
  return size % 4 == 0 ? static_cast<uint32_t>(size / 4) : 0;
}

int dtype_code(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return 0;
    case DType::kI32:
      return 1;
    case DType::kI64:
      return 2;
    case DType::kBool:
      return 3;
    default:
      return -1;
  }
}

Status require_input(const Graph& graph, const Node& node, size_t index,
                     DType dtype) {
  if (index >= node.inputs.size() || node.inputs[index] == kNoValue) {
    return Status::ok();
  }
  const Value& value = graph.value(node.inputs[index]);
  if (value.dtype == dtype) return Status::ok();
  return unsupported("{}: input '{}' is {}; the Vulkan kernel takes {}",
                     node.label(), value.name, dtype_name(value.dtype),
                     dtype_name(dtype));
}

Status require_outputs(const Graph& graph, const Node& node, DType dtype) {
  for (ValueId id : node.outputs) {
    if (id != kNoValue && graph.value(id).dtype != dtype) {
      return unsupported("{}: output '{}' is {}; the Vulkan kernel makes {}",
                         node.label(), graph.value(id).name,
                         dtype_name(graph.value(id).dtype), dtype_name(dtype));
    }
  }
  return Status::ok();
}

Status require_constant(const Graph& graph, const Node& node, size_t index) {
  if (index >= node.inputs.size() || node.inputs[index] == kNoValue ||
      graph.is_constant(node.inputs[index])) {
    return Status::ok();
  }
  return unsupported(
      "{}: input '{}' is computed at run time; the Vulkan kernel needs it "
      "constant to record the command buffer",
      node.label(), graph.value(node.inputs[index]).name);
}

namespace {

// The graph input whose data `id` depends on, or kNoValue when it depends
// only on constants and on dims (Shape and Size read no data).
ValueId data_source(const Graph& graph, const std::vector<int>& producers,
                    ValueId id, std::set<ValueId>& seen) {
  if (graph.is_constant(id) || !seen.insert(id).second) return kNoValue;
  int producer = producers[id];
  if (producer < 0) return id;  // a graph input
  const Node& node = graph.nodes[producer];
  if (node.op == "Shape" || node.op == "Size") return kNoValue;
  for (ValueId input : node.inputs) {
    if (input == kNoValue) continue;
    ValueId source = data_source(graph, producers, input, seen);
    if (source != kNoValue) return source;
  }
  return kNoValue;
}

}  // namespace

Status require_shape_derived(const Graph& graph, const Node& node,
                             size_t index) {
  if (index >= node.inputs.size() || node.inputs[index] == kNoValue) {
    return Status::ok();
  }
  std::set<ValueId> seen;
  ValueId source =
      data_source(graph, graph.producers(), node.inputs[index], seen);
  if (source == kNoValue) return Status::ok();
  return unsupported(
      "{}: input '{}' depends on the data of '{}', so the output size is "
      "known only at run time; the Vulkan backend records every size in "
      "advance",
      node.label(), graph.value(node.inputs[index]).name,
      graph.value(source).name);
}

const std::vector<size_t>& parameter_inputs(const Node& node) {
  static const std::map<std::string, std::vector<size_t>> by_op = {
      {"Reshape", {1}},        {"Squeeze", {1}},         {"Unsqueeze", {1}},
      {"Slice", {1, 2, 3, 4}}, {"Split", {1}},           {"Expand", {1}},
      {"Tile", {1}},           {"ConstantOfShape", {0}}, {"Range", {0, 1, 2}},
      {"Pad", {1, 2, 3}},      {"Trilu", {1}},           {"CumSum", {1}},
      {"ReduceSum", {1}},      {"ReduceMean", {1}},      {"ReduceMax", {1}},
      {"ReduceMin", {1}}};
  static const std::vector<size_t> none;
  if (node.domain != kOnnxDomain) return none;
  auto found = by_op.find(node.op);
  return found == by_op.end() ? none : found->second;
}

bool is_host_parameter(const Graph& graph, ValueId id) {
  if (id == kNoValue || graph.is_constant(id)) return false;
  if (std::find(graph.inputs.begin(), graph.inputs.end(), id) ==
      graph.inputs.end()) {
    return false;
  }
  for (const StatePair& pair : graph.state_pairs) {
    if (pair.input == id) return false;
  }
  const Value& value = graph.value(id);
  if (!is_integer(value.dtype) && value.dtype != DType::kF32) return false;
  if (value.shape && value.shape->is_fixed()) {
    int64_t elements = 1;
    for (int64_t d : value.shape->fixed_dims()) elements *= d;
    if (elements > kMaxHostParameterElements) return false;
  }
  return true;
}

Status require_host_known(const Graph& graph, const Node& node, size_t index) {
  if (index >= node.inputs.size() || node.inputs[index] == kNoValue ||
      is_host_parameter(graph, node.inputs[index])) {
    return Status::ok();
  }
  const std::vector<int> producers = graph.producers();
  std::set<ValueId> seen;
  ValueId source = data_source(graph, producers, node.inputs[index], seen);
  if (source == kNoValue) return Status::ok();
  const Value& value = graph.value(node.inputs[index]);
  if (producers[node.inputs[index]] < 0) {
    return unsupported(
        "{}: parameter input '{}' ({} {}) is a graph input of more than {} "
        "elements or of another dtype; the Vulkan backend reads parameters "
        "on the host before recording and takes small integer (or f32) ones",
        node.label(), value.name, dtype_name(value.dtype),
        value.shape ? value.shape->to_string() : "(any)",
        kMaxHostParameterElements);
  }
  return unsupported(
      "{}: parameter input '{}' is computed on the device from the data of "
      "'{}'; the Vulkan backend reads parameters on the host before "
      "recording (that would need a read-back in the middle of the "
      "recording), so it takes graph inputs or values made from shapes (a "
      "backend list such as vulkan,cpu computes it on the host)",
      node.label(), value.name, graph.value(source).name);
}

namespace {

// The integers a Constant node's attribute holds, if `id` is its output.
std::optional<std::vector<int64_t>> constant_node_ints(const Graph& graph,
                                                       ValueId id) {
  int producer = graph.producers()[id];
  if (producer < 0 || graph.nodes[producer].op != "Constant") {
    return std::nullopt;
  }
  const Node& node = graph.nodes[producer];
  if (const Attribute* a = node.attr("value_ints")) return a->as_ints();
  if (const Attribute* a = node.attr("value_int")) {
    return std::vector<int64_t>{a->as_int()};
  }
  const Attribute* a = node.attr("value");
  if (a == nullptr || !is_integer(a->as_tensor().dtype())) return std::nullopt;
  std::vector<int64_t> values(a->as_tensor().num_elements());
  for (size_t i = 0; i < values.size(); ++i) {
    values[i] = a->as_tensor().element_i64(static_cast<int64_t>(i));
  }
  return values;
}

}  // namespace

Status require_known_ints(const Graph& graph, const Node& node, size_t index) {
  if (index < node.inputs.size() && node.inputs[index] != kNoValue &&
      !graph.is_constant(node.inputs[index]) &&
      (constant_node_ints(graph, node.inputs[index]) ||
       is_host_parameter(graph, node.inputs[index]))) {
    return Status::ok();
  }
  return require_constant(graph, node, index);
}

std::vector<int64_t> constant_ints(const NodeArgs& args, size_t index,
                                   std::vector<int64_t> fallback) {
  if (index >= args.node->inputs.size() ||
      args.node->inputs[index] == kNoValue) {
    return fallback;
  }
  ValueId id = args.node->inputs[index];
  const Tensor* tensor = args.graph->constant(id);
  if (tensor == nullptr && index < args.known_inputs.size()) {
    tensor = args.known_inputs[index];  // a host parameter
  }
  if (tensor == nullptr) {
    return constant_node_ints(*args.graph, id).value_or(fallback);
  }
  std::vector<int64_t> values(tensor->num_elements());
  for (int64_t i = 0; i < tensor->num_elements(); ++i) {
    values[i] = tensor->element_i64(i);
  }
  return values;
}

void append_padded(std::vector<uint32_t>& words,
                   const std::vector<int64_t>& values, uint32_t pad) {
  for (int i = 0; i < kMaxRank; ++i) {
    words.push_back(i < static_cast<int>(values.size())
                        ? static_cast<uint32_t>(values[i])
                        : pad);
  }
}

std::vector<uint8_t> words_to_bytes(const std::vector<uint32_t>& words) {
  std::vector<uint8_t> bytes(words.size() * sizeof(uint32_t));
  std::memcpy(bytes.data(), words.data(), bytes.size());
  return bytes;
}

Status require_output_rank_fits(const NodeArgs& args) {
  if (args.output_dims[0].size() > kMaxRank) {
    return unsupported("{}: rank {} is over the Vulkan kernel's {}",
                       args.node->label(), args.output_dims[0].size(),
                       kMaxRank);
  }
  return Status::ok();
}

Status require_dtype_in(const Graph& graph, const Node& node, ValueId id,
                        std::initializer_list<DType> allowed) {
  DType dtype = graph.value(id).dtype;
  for (DType d : allowed) {
    if (d == dtype) return Status::ok();
  }
  return unsupported("{}: '{}' is {}; the Vulkan kernel takes f32, i32, i64{}",
                     node.label(), graph.value(id).name, dtype_name(dtype),
                     allowed.size() > 4   ? ", bool or f16"
                     : allowed.size() > 3 ? " or bool"
                                          : "");
}

Status require_words_dtype(const Graph& graph, const Node& node, ValueId id) {
  DType dtype = graph.value(id).dtype;
  if (element_words(dtype) == 0 || dtype_code(dtype) < 0) {
    return unsupported("{}: '{}' is {}; the Vulkan kernel takes f32, i32, i64",
                       node.label(), graph.value(id).name, dtype_name(dtype));
  }
  return Status::ok();
}

uint32_t index_words(DType dtype) { return dtype == DType::kI64 ? 2 : 1; }

}  // namespace seqrt::vulkan
