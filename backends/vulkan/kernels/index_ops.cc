// Indexing and filling ops over 32-bit words (f32, i32, i64): Gather,
// GatherElements (shaders/gather.comp), Pad (pad.comp), Trilu (trilu.comp),
// and Range and ConstantOfShape (range.comp); GatherND (gather_nd.comp)
// also moves bools and halves.
#include <fmt/format.h>

#include <algorithm>

#include "backends/vulkan/kernels/kernel_util.h"

namespace seqrt::vulkan {
namespace {

Status words_dtype(const Graph& graph, const Node& node, ValueId id) {
  DType dtype = graph.value(id).dtype;
  if (element_words(dtype) == 0 || dtype_code(dtype) < 0) {
    return unsupported("{}: '{}' is {}; the Vulkan kernel takes f32, i32, i64",
                       node.label(), graph.value(id).name, dtype_name(dtype));
  }
  return Status::ok();
}

uint32_t index_words(DType dtype) { return dtype == DType::kI64 ? 2 : 1; }

Status record_gather(bool elements, const NodeArgs& args, Recorder& recorder) {
  const std::vector<int64_t>& data = args.input_dims[0];
  const std::vector<int64_t>& out = args.output_dims[0];
  size_t axis = static_cast<size_t>(
      normalized_axis(int_attr(*args.node, "axis", 0), data.size()));
  if (elements && out.size() > kMaxRank) {
    return unsupported("{}: rank {} is over the Vulkan kernel's {}",
                       args.node->label(), out.size(), kMaxRank);
  }
  int64_t count = element_count(out);
  int64_t inner = 1;
  for (size_t d = axis + 1; d < data.size(); ++d) inner *= data[d];
  std::vector<uint32_t> words = {
      static_cast<uint32_t>(count),
      static_cast<uint32_t>(data[axis]),
      static_cast<uint32_t>(inner),
      static_cast<uint32_t>(element_count(args.input_dims[1])),
      static_cast<uint32_t>(out.size()),
      static_cast<uint32_t>(axis)};
  append_padded(words, elements ? out : std::vector<int64_t>{}, 1);
  append_padded(words,
                elements ? row_major_strides(data) : std::vector<int64_t>{}, 0);
  Dispatch dispatch;
  dispatch.shader = "gather";
  dispatch.specialization = {kLocalSize, elements ? 1u : 0u,
                             element_words(args.output_dtypes[0]),
                             index_words(args.input_dtypes[1])};
  dispatch.push_constants = words_to_bytes(words);
  SEQRT_ASSIGN_OR_RETURN(
      BufferSlice error,
      recorder.error_word(
          fmt::format("an index is out of range [-{0}, {0}) along axis {1}",
                      data[axis], axis)));
  dispatch.reads = {args.inputs[0], args.inputs[1]};
  dispatch.writes = {args.outputs[0], error};
  dispatch.groups = groups_for(count, recorder.limits());
  return recorder.dispatch(dispatch);
}

Status supports_gather(const Graph& graph, const Node& node,
                       const DeviceLimits&) {
  return words_dtype(graph, node, node.outputs[0]);
}

// GatherND's shapes (ops/shape/gather_nd.cc) checked again at the dims
// of this run: inference may have seen symbols where they now differ.
Status check_gather_nd_dims(const Node& node, const std::vector<int64_t>& data,
                            const std::vector<int64_t>& indices, int64_t b) {
  const int64_t r = static_cast<int64_t>(data.size());
  const int64_t q = static_cast<int64_t>(indices.size());
  if (r == 0 || q == 0 || b < 0 || b >= std::min(r, q)) {
    return invalid_argument(
        "{}: batch_dims {} must be in [0, {}) for data {} and indices {}",
        node.label(), b, std::min(r, q), dims_to_string(data),
        dims_to_string(indices));
  }
  for (int64_t d = 0; d < b; ++d) {
    if (data[d] != indices[d]) {
      return invalid_argument(
          "{}: batch dim {} of data {} and indices {} differ", node.label(), d,
          dims_to_string(data), dims_to_string(indices));
    }
  }
  const int64_t k = indices.back();
  if (k < 1 || k > r - b) {
    return invalid_argument(
        "{}: indices' last dim {} must be in [1, {}] (data's rank {} less "
        "batch_dims {})",
        node.label(), k, r - b, r, b);
  }
  return Status::ok();
}

Status record_gather_nd(const NodeArgs& args, Recorder& recorder) {
  const std::vector<int64_t>& data = args.input_dims[0];
  const std::vector<int64_t>& indices = args.input_dims[1];
  const int64_t b = int_attr(*args.node, "batch_dims", 0);
  SEQRT_RETURN_IF_ERROR(check_gather_nd_dims(*args.node, data, indices, b));
  if (data.size() > kMaxRank) {
    return unsupported("{}: rank {} is over the Vulkan kernel's {}",
                       args.node->label(), data.size(), kMaxRank);
  }
  const size_t k = static_cast<size_t>(indices.back());
  const size_t first = static_cast<size_t>(b);
  const std::vector<int64_t> strides = row_major_strides(data);
  int64_t slice = 1;
  for (size_t d = first + k; d < data.size(); ++d) slice *= data[d];
  int64_t per_batch = 1;
  for (size_t d = first; d + 1 < indices.size(); ++d) per_batch *= indices[d];
  const int64_t batch_stride =
      first == 0 ? element_count(data) : strides[first - 1];
  const int64_t count = element_count(args.output_dims[0]);
  std::vector<uint32_t> words = {
      static_cast<uint32_t>(count), static_cast<uint32_t>(slice),
      static_cast<uint32_t>(k), static_cast<uint32_t>(per_batch),
      static_cast<uint32_t>(batch_stride)};
  append_padded(words, {data.begin() + b, data.begin() + b + k}, 1);
  append_padded(words, {strides.begin() + b, strides.begin() + b + k}, 0);
  const ElementLayout layout = element_layout(args.output_dtypes[0]);
  Dispatch dispatch;
  dispatch.shader = "gather_nd";
  dispatch.specialization = {kLocalSize, layout.words, layout.part_bytes,
                             index_words(args.input_dtypes[1])};
  dispatch.push_constants = words_to_bytes(words);
  SEQRT_ASSIGN_OR_RETURN(
      BufferSlice error,
      recorder.error_word(fmt::format("an index is out of range for data {}",
                                      dims_to_string(data))));
  dispatch.reads = {args.inputs[0], args.inputs[1]};
  dispatch.writes = {args.outputs[0], error};
  const int64_t per_invocation = layout.per_invocation();
  dispatch.groups = groups_for((count + per_invocation - 1) / per_invocation,
                               recorder.limits());
  if (count == 0) return Status::ok();
  return recorder.dispatch(dispatch);
}

Status supports_gather_nd(const Graph& graph, const Node& node,
                          const DeviceLimits&) {
  SEQRT_RETURN_IF_ERROR(require_movable(graph, node, node.outputs[0]));
  const DType index = graph.value(node.inputs[1]).dtype;
  if (index != DType::kI64 && index != DType::kI32) {
    return unsupported("{}: indices are {}; the Vulkan kernel takes i32, i64",
                       node.label(), dtype_name(index));
  }
  return Status::ok();
}

// A scalar constant as the words of one element of `dtype`.
std::array<uint32_t, 2> value_words(const Tensor& value, DType dtype) {
  if (dtype == DType::kF32) {
    return {float_word(static_cast<float>(value.element_f64(0))), 0};
  }
  int64_t v = value.element_i64(0);
  return {static_cast<uint32_t>(v), static_cast<uint32_t>(v >> 32)};
}

Status record_pad(const NodeArgs& args, Recorder& recorder) {
  const Node& node = *args.node;
  const std::vector<int64_t>& in = args.input_dims[0];
  const std::vector<int64_t>& out = args.output_dims[0];
  if (in.size() > kMaxRank) {
    return unsupported("{}: rank {} is over the Vulkan kernel's {}",
                       node.label(), in.size(), kMaxRank);
  }
  std::vector<int64_t> pads = constant_ints(args, 1);
  std::vector<int64_t> axes = constant_ints(args, 3);
  if (axes.empty()) {
    for (size_t d = 0; d < in.size(); ++d) axes.push_back(d);
  }
  std::vector<int64_t> begin(in.size(), 0);
  for (size_t i = 0; i < axes.size() && i < pads.size(); ++i) {
    begin[normalized_axis(axes[i], in.size())] = pads[i];
  }
  const Attribute* mode_attr = node.attr("mode");
  std::string mode = mode_attr == nullptr ? "constant" : mode_attr->as_string();
  uint32_t mode_code = mode == "reflect" ? 1
                       : mode == "edge"  ? 2
                       : mode == "wrap"  ? 3
                                         : 0;
  std::array<uint32_t, 2> value = {0, 0};
  if (node.inputs.size() > 2 && node.inputs[2] != kNoValue) {
    value = value_words(*args.graph->constant(node.inputs[2]),
                        args.output_dtypes[0]);
  }
  int64_t count = element_count(out);
  std::vector<uint32_t> words = {static_cast<uint32_t>(count),
                                 static_cast<uint32_t>(in.size()), value[0],
                                 value[1]};
  append_padded(words, out, 1);
  append_padded(words, in, 1);
  append_padded(words, begin, 0);
  Dispatch dispatch;
  dispatch.shader = "pad";
  dispatch.specialization = {kLocalSize, mode_code,
                             element_words(args.output_dtypes[0])};
  dispatch.push_constants = words_to_bytes(words);
  dispatch.reads = {args.inputs[0]};
  dispatch.writes = {args.outputs[0]};
  dispatch.groups = groups_for(count, recorder.limits());
  return recorder.dispatch(dispatch);
}

Status supports_pad(const Graph& graph, const Node& node, const DeviceLimits&) {
  SEQRT_RETURN_IF_ERROR(words_dtype(graph, node, node.outputs[0]));
  SEQRT_RETURN_IF_ERROR(require_known_ints(graph, node, 1));
  SEQRT_RETURN_IF_ERROR(require_constant(graph, node, 2));
  return require_known_ints(graph, node, 3);
}

Status record_trilu(const NodeArgs& args, Recorder& recorder) {
  const std::vector<int64_t>& dims = args.input_dims[0];
  if (dims.size() < 2) {
    return invalid_argument("{}: Trilu needs rank >= 2", args.node->label());
  }
  std::vector<int64_t> k = constant_ints(args, 1, {0});
  int64_t count = element_count(dims);
  const ElementLayout layout = element_layout(args.output_dtypes[0]);
  Dispatch dispatch;
  dispatch.shader = "trilu";
  dispatch.specialization = {kLocalSize,
                             int_attr(*args.node, "upper", 1) != 0 ? 1u : 0u,
                             layout.words, layout.part_bytes};
  // k past the matrix behaves like the edge; clamp it into 32 bits.
  int64_t k_clamped =
      std::max<int64_t>(-(1 << 30), std::min<int64_t>(k[0], 1 << 30));
  dispatch.push_constants = push_bytes(
      {static_cast<uint32_t>(count),
       static_cast<uint32_t>(dims[dims.size() - 2]),
       static_cast<uint32_t>(dims.back()), static_cast<uint32_t>(k_clamped)});
  dispatch.reads = {args.inputs[0]};
  dispatch.writes = {args.outputs[0]};
  const int64_t per_invocation = layout.per_invocation();
  dispatch.groups = groups_for((count + per_invocation - 1) / per_invocation,
                               recorder.limits());
  return recorder.dispatch(dispatch);
}

Status supports_trilu(const Graph& graph, const Node& node,
                      const DeviceLimits&) {
  SEQRT_RETURN_IF_ERROR(require_movable(graph, node, node.outputs[0]));
  return require_known_ints(graph, node, 1);
}

// start + i * delta into `out` (count elements of dtype).
Status record_sequence(const BufferSlice& out, DType dtype, int64_t count,
                       std::array<uint32_t, 2> start, uint32_t delta,
                       Recorder& recorder) {
  Dispatch dispatch;
  dispatch.shader = "range";
  dispatch.specialization = {kLocalSize,
                             static_cast<uint32_t>(dtype_code(dtype))};
  dispatch.push_constants =
      push_bytes({static_cast<uint32_t>(count), start[0], start[1], delta});
  dispatch.writes = {out};
  dispatch.groups = groups_for(count, recorder.limits());
  return recorder.dispatch(dispatch);
}

Status record_range(const NodeArgs& args, Recorder& recorder) {
  const Graph& graph = *args.graph;
  const Node& node = *args.node;
  DType dtype = args.output_dtypes[0];
  const Tensor& start = *graph.constant(node.inputs[0]);
  const Tensor& delta = *graph.constant(node.inputs[2]);
  uint32_t delta_word =
      dtype == DType::kF32
          ? float_word(static_cast<float>(delta.element_f64(0)))
          : static_cast<uint32_t>(delta.element_i64(0));
  return record_sequence(args.outputs[0], dtype,
                         element_count(args.output_dims[0]),
                         value_words(start, dtype), delta_word, recorder);
}

Status supports_range(const Graph& graph, const Node& node,
                      const DeviceLimits&) {
  SEQRT_RETURN_IF_ERROR(words_dtype(graph, node, node.outputs[0]));
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    SEQRT_RETURN_IF_ERROR(require_constant(graph, node, i));
  }
  const Tensor* delta = graph.constant(node.inputs[2]);
  if (graph.value(node.outputs[0]).dtype != DType::kF32 &&
      (delta->element_i64(0) > INT32_MAX ||
       delta->element_i64(0) < INT32_MIN)) {
    return unsupported("{}: the Vulkan Range takes a 32-bit integer delta",
                       node.label());
  }
  return Status::ok();
}

Status record_constant_of_shape(const NodeArgs& args, Recorder& recorder) {
  DType dtype = args.output_dtypes[0];
  const Attribute* value = args.node->attr("value");
  std::array<uint32_t, 2> start = {0, 0};
  if (dtype == DType::kBool) {
    // Bools are bytes: a word of four equal bytes fills them.
    bool set = value != nullptr && value->as_tensor().element_i64(0) != 0;
    return recorder.fill(args.outputs[0], set ? 0x01010101u : 0u);
  }
  if (value != nullptr) start = value_words(value->as_tensor(), dtype);
  return record_sequence(args.outputs[0], dtype,
                         element_count(args.output_dims[0]), start, 0,
                         recorder);
}

Status supports_constant_of_shape(const Graph& graph, const Node& node,
                                  const DeviceLimits&) {
  if (graph.value(node.outputs[0]).dtype != DType::kBool) {
    SEQRT_RETURN_IF_ERROR(words_dtype(graph, node, node.outputs[0]));
  }
  // The shape input is never read: the plan has the output's dims.
  return require_shape_derived(graph, node, 0);
}

}  // namespace

void register_index_ops_kernels(KernelTable& table) {
  for (bool elements : {false, true}) {
    table.add(
        {kOnnxDomain, elements ? "GatherElements" : "Gather", supports_gather,
         nullptr,
         [elements](const NodeArgs& args, const KernelTiling&, Recorder& r) {
           return record_gather(elements, args, r);
         }});
  }
  table.add({kOnnxDomain, "GatherND", supports_gather_nd, nullptr,
             [](const NodeArgs& args, const KernelTiling&, Recorder& r) {
               return record_gather_nd(args, r);
             }});
  table.add({kOnnxDomain, "Pad", supports_pad, nullptr,
             [](const NodeArgs& args, const KernelTiling&, Recorder& r) {
               return record_pad(args, r);
             }});
  table.add({kOnnxDomain, "Trilu", supports_trilu, nullptr,
             [](const NodeArgs& args, const KernelTiling&, Recorder& r) {
               return record_trilu(args, r);
             }});
  table.add({kOnnxDomain, "Range", supports_range, nullptr,
             [](const NodeArgs& args, const KernelTiling&, Recorder& r) {
               return record_range(args, r);
             }});
  table.add({kOnnxDomain, "ConstantOfShape", supports_constant_of_shape,
             nullptr,
             [](const NodeArgs& args, const KernelTiling&, Recorder& r) {
               return record_constant_of_shape(args, r);
             }});
}

}  // namespace seqrt::vulkan
