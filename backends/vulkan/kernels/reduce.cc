// Reductions in fp32: ReduceSum/Mean/Max/Min over constant axes
// (shaders/reduce.comp, one workgroup per output element), ArgMax/ArgMin
// (arg_reduce.comp) and CumSum along a constant axis (shaders/cumsum.comp,
// one invocation per line).
#include <map>

#include "backends/vulkan/kernels/kernel_util.h"
#include "ops/node_attrs.h"

namespace seqrt::vulkan {
namespace {

// Op codes of shaders/reduce.comp.
const std::map<std::string, uint32_t> kReduceOps = {
    {"ReduceSum", 0}, {"ReduceMean", 1}, {"ReduceMax", 2}, {"ReduceMin", 3}};

Status record_reduce(uint32_t code, const NodeArgs& args, Recorder& recorder) {
  const Node& node = *args.node;
  const std::vector<int64_t>& dims = args.input_dims[0];
  if (dims.size() > kMaxRank) {
    return unsupported("{}: rank {} is over the Vulkan kernel's {}",
                       node.label(), dims.size(), kMaxRank);
  }
  std::vector<int64_t> axes = constant_ints(args, 1);
  std::vector<bool> reduced(dims.size(), axes.empty());
  if (axes.empty() && node_attr_int(node, "noop_with_empty_axes") != 0) {
    reduced.assign(dims.size(), false);
  }
  for (int64_t axis : axes) reduced[normalized_axis(axis, dims.size())] = true;
  std::vector<int64_t> strides = row_major_strides(dims);
  std::vector<int64_t> keep_dims, keep_strides, reduce_dims, reduce_strides;
  for (size_t d = 0; d < dims.size(); ++d) {
    (reduced[d] ? reduce_dims : keep_dims).push_back(dims[d]);
    (reduced[d] ? reduce_strides : keep_strides).push_back(strides[d]);
  }
  int64_t outputs = element_count(keep_dims);
  std::vector<uint32_t> words = {
      static_cast<uint32_t>(outputs),
      static_cast<uint32_t>(element_count(reduce_dims)),
      static_cast<uint32_t>(keep_dims.size()),
      static_cast<uint32_t>(reduce_dims.size())};
  append_padded(words, keep_dims, 1);
  append_padded(words, keep_strides, 0);
  append_padded(words, reduce_dims, 1);
  append_padded(words, reduce_strides, 0);
  Dispatch dispatch;
  dispatch.shader = "reduce";
  dispatch.specialization = {code};
  dispatch.push_constants = words_to_bytes(words);
  dispatch.reads = {args.inputs[0]};
  dispatch.writes = {args.outputs[0]};
  dispatch.groups = groups_for_rows(outputs, recorder.limits());
  return recorder.dispatch(dispatch);
}

Status record_cumsum(const NodeArgs& args, Recorder& recorder) {
  const Node& node = *args.node;
  const std::vector<int64_t>& dims = args.input_dims[0];
  std::vector<int64_t> axis_value = constant_ints(args, 1);
  if (axis_value.size() != 1 || dims.empty()) {
    return invalid_argument("{}: CumSum needs a scalar axis and rank >= 1",
                            node.label());
  }
  size_t axis =
      static_cast<size_t>(normalized_axis(axis_value[0], dims.size()));
  int64_t inner = 1, outer = 1;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (d < axis) outer *= dims[d];
    if (d > axis) inner *= dims[d];
  }
  int64_t lines = outer * inner;
  Dispatch dispatch;
  dispatch.shader = "cumsum";
  dispatch.specialization = {kLocalSize,
                             node_attr_int(node, "exclusive") != 0 ? 1u : 0u,
                             node_attr_int(node, "reverse") != 0 ? 1u : 0u};
  dispatch.push_constants = push_bytes({static_cast<uint32_t>(lines),
                                        static_cast<uint32_t>(dims[axis]),
                                        static_cast<uint32_t>(inner)});
  dispatch.reads = {args.inputs[0]};
  dispatch.writes = {args.outputs[0]};
  dispatch.groups = groups_for(lines, recorder.limits());
  return recorder.dispatch(dispatch);
}

// ArgMax and ArgMin along one axis into i64 indices (shaders/
// arg_reduce.comp, one workgroup per output).
Status record_arg_reduce(bool is_max, const NodeArgs& args,
                         Recorder& recorder) {
  const std::vector<int64_t>& dims = args.input_dims[0];
  if (dims.empty()) {
    return invalid_argument("{}: needs rank >= 1", args.node->label());
  }
  size_t axis = static_cast<size_t>(
      normalized_axis(node_attr_int(*args.node, "axis"), dims.size()));
  int64_t inner = 1, outer = 1;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (d < axis) outer *= dims[d];
    if (d > axis) inner *= dims[d];
  }
  int64_t outputs = outer * inner;
  Dispatch dispatch;
  dispatch.shader = "arg_reduce";
  dispatch.specialization = {
      is_max ? 1u : 0u,
      node_attr_int(*args.node, "select_last_index") != 0 ? 1u : 0u};
  dispatch.push_constants = push_bytes({static_cast<uint32_t>(outputs),
                                        static_cast<uint32_t>(dims[axis]),
                                        static_cast<uint32_t>(inner)});
  dispatch.reads = {args.inputs[0]};
  dispatch.writes = {args.outputs[0]};
  dispatch.groups = groups_for_rows(outputs, recorder.limits());
  return recorder.dispatch(dispatch);
}

Status supports_arg_reduce(const Graph& graph, const Node& node,
                           const DeviceLimits&) {
  SEQRT_RETURN_IF_ERROR(require_input(graph, node, 0, DType::kF32));
  return require_outputs(graph, node, DType::kI64);
}

// Data and output f32; the axes input (i64 or i32) must be a constant.
Status supports_reduce(const Graph& graph, const Node& node,
                       const DeviceLimits&) {
  SEQRT_RETURN_IF_ERROR(require_input(graph, node, 0, DType::kF32));
  SEQRT_RETURN_IF_ERROR(require_outputs(graph, node, DType::kF32));
  return require_known_ints(graph, node, 1);
}

}  // namespace

void register_reduce_kernels(KernelTable& table) {
  for (const auto& [op, code] : kReduceOps) {
    uint32_t c = code;
    table.add({kOnnxDomain, op, supports_reduce, nullptr,
               [c](const NodeArgs& args, const KernelTiling&, Recorder& r) {
                 return record_reduce(c, args, r);
               }});
  }
  for (bool is_max : {true, false}) {
    table.add(
        {kOnnxDomain, is_max ? "ArgMax" : "ArgMin", supports_arg_reduce,
         nullptr,
         [is_max](const NodeArgs& args, const KernelTiling&, Recorder& r) {
           return record_arg_reduce(is_max, args, r);
         }});
  }
  table.add({kOnnxDomain, "CumSum", supports_reduce, nullptr,
             [](const NodeArgs& args, const KernelTiling&, Recorder& r) {
               return record_cumsum(args, r);
             }});
}

}  // namespace seqrt::vulkan
