// Row-wise fp32 ops, one workgroup per row: Softmax and LogSoftmax along any
// axis (shaders/softmax.comp), LayerNormalization with its optional Mean and
// InvStdDev outputs and RMSNormalization (shaders/layer_norm.comp).
#include "backends/vulkan/kernels/kernel_util.h"
#include "ops/node_attrs.h"

namespace seqrt::vulkan {
namespace {

int64_t product(const std::vector<int64_t>& dims, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to; ++i) p *= dims[i];
  return p;
}

Status record_softmax(bool log, const NodeArgs& args, Recorder& recorder) {
  const std::vector<int64_t>& dims = args.input_dims[0];
  if (dims.empty()) {
    return unsupported("{}: the Vulkan Softmax needs rank >= 1",
                       args.node->label());
  }
  size_t axis = static_cast<size_t>(
      normalized_axis(node_attr_int(*args.node, "axis"), dims.size()));
  int64_t len = dims[axis];
  int64_t inner = product(dims, axis + 1, dims.size());
  int64_t rows = product(dims, 0, axis) * inner;
  if (rows == 0 || len == 0) return Status::ok();
  Dispatch dispatch;
  dispatch.shader = "softmax";
  dispatch.specialization = {log ? 1u : 0u};
  dispatch.push_constants =
      push_bytes({static_cast<uint32_t>(rows), static_cast<uint32_t>(len),
                  static_cast<uint32_t>(inner)});
  dispatch.reads = {args.inputs[0]};
  dispatch.writes = {args.outputs[0]};
  dispatch.groups = groups_for_rows(rows, recorder.limits());
  return recorder.dispatch(dispatch);
}

// LayerNormalization (rms = false) and RMSNormalization (rms = true).
Status record_norm(bool rms, const NodeArgs& args, Recorder& recorder) {
  const Node& node = *args.node;
  const std::vector<int64_t>& dims = args.input_dims[0];
  if (dims.size() > kMaxRank) {
    return unsupported("{}: rank {} is over the Vulkan kernel's {}",
                       node.label(), dims.size(), kMaxRank);
  }
  size_t axis = static_cast<size_t>(
      normalized_axis(node_attr_int(node, "axis"), dims.size()));
  int64_t rows = product(dims, 0, axis);
  int64_t len = product(dims, axis, dims.size());
  if (rows == 0 || len == 0) return Status::ok();
  bool has_bias = !rms && args.inputs.size() > 2 && !args.inputs[2].empty();
  std::vector<uint32_t> words = {static_cast<uint32_t>(rows),
                                 static_cast<uint32_t>(len),
                                 static_cast<uint32_t>(dims.size()),
                                 float_word(node_attr_float(node, "epsilon"))};
  append_padded(words, dims, 1);
  append_padded(words, broadcast_strides(args.input_dims[1], dims), 0);
  append_padded(words,
                has_bias ? broadcast_strides(args.input_dims[2], dims)
                         : std::vector<int64_t>{},
                0);
  // Mean and InvStdDev go to scratch when the graph does not take them.
  std::vector<BufferSlice> writes = {args.outputs[0]};
  for (size_t i = 1; i <= 2; ++i) {
    if (i < args.outputs.size() && !args.outputs[i].empty()) {
      writes.push_back(args.outputs[i]);
    } else {
      SEQRT_ASSIGN_OR_RETURN(BufferSlice scratch,
                             recorder.scratch(rows * sizeof(float)));
      writes.push_back(scratch);
    }
  }
  Dispatch dispatch;
  dispatch.shader = "layer_norm";
  dispatch.specialization = {rms ? 1u : 0u, has_bias ? 1u : 0u};
  dispatch.push_constants = words_to_bytes(words);
  // Without a bias the shader's binding 2 is never read; X stands in.
  dispatch.reads = {args.inputs[0], args.inputs[1],
                    has_bias ? args.inputs[2] : args.inputs[0]};
  dispatch.writes = writes;
  dispatch.groups = groups_for_rows(rows, recorder.limits());
  return recorder.dispatch(dispatch);
}

Status supports_f32(const Graph& graph, const Node& node, const DeviceLimits&) {
  return require_f32(graph, node);
}

}  // namespace

void register_normalization_kernels(KernelTable& table) {
  for (bool log : {false, true}) {
    table.add({kOnnxDomain, log ? "LogSoftmax" : "Softmax", supports_f32,
               nullptr,
               [log](const NodeArgs& args, const KernelTiling&, Recorder& r) {
                 return record_softmax(log, args, r);
               }});
  }
  for (bool rms : {false, true}) {
    table.add({kOnnxDomain, rms ? "RMSNormalization" : "LayerNormalization",
               supports_f32, nullptr,
               [rms](const NodeArgs& args, const KernelTiling&, Recorder& r) {
                 return record_norm(rms, args, r);
               }});
  }
}

}  // namespace seqrt::vulkan
