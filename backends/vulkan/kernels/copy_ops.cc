// Data-movement ops. Reshape-like ops are one buffer copy (the executable
// skips it when both sides share memory); Transpose, Concat, Expand, Slice
// and Split are the strided-copy shader over 32-bit words (f32, i32, i64
// tensors).
#include <algorithm>

#include "backends/vulkan/kernels/kernel_util.h"

namespace seqrt::vulkan {
namespace {

Status record_view_copy(const NodeArgs& args, Recorder& recorder) {
  BufferSlice src = args.inputs[0];
  BufferSlice dst = args.outputs[0];
  if (src.buffer == dst.buffer && src.offset == dst.offset) {
    return Status::ok();
  }
  src.bytes = dst.bytes = std::min(src.bytes, dst.bytes);
  return recorder.copy(src, dst);
}

Status supports_words(const Graph& graph, const Node& node,
                      const DeviceLimits&) {
  DType dtype = graph.value(node.outputs[0]).dtype;
  if (element_words(dtype) == 0) {
    return unsupported(
        "{}: {} tensors are not whole 32-bit words; the Vulkan "
        "copy kernels take f32, i32 and i64",
        node.label(), dtype_name(dtype));
  }
  return Status::ok();
}

// One strided copy: `dims` (elements) with strides in elements; a trailing
// axis of `words` per element is added.
Status strided_copy(const BufferSlice& src, const BufferSlice& dst,
                    std::vector<int64_t> dims, std::vector<int64_t> src_strides,
                    std::vector<int64_t> dst_strides, int64_t src_base,
                    int64_t dst_base, uint32_t words, const Node& node,
                    Recorder& recorder) {
  for (auto& s : src_strides) s *= words;
  for (auto& s : dst_strides) s *= words;
  dims.push_back(words);
  src_strides.push_back(1);
  dst_strides.push_back(1);
  if (dims.size() > kMaxRank) {
    return unsupported("{}: rank {} is over the Vulkan copy kernel's {}",
                       node.label(), dims.size() - 1, kMaxRank - 1);
  }
  int64_t count = element_count(dims);
  std::vector<uint32_t> push = {static_cast<uint32_t>(count),
                                static_cast<uint32_t>(dims.size()),
                                static_cast<uint32_t>(src_base * words),
                                static_cast<uint32_t>(dst_base * words)};
  append_padded(push, dims, 1);
  append_padded(push, src_strides, 0);
  append_padded(push, dst_strides, 0);
  Dispatch dispatch;
  dispatch.shader = "strided_copy";
  dispatch.specialization = {kLocalSize};
  dispatch.push_constants = words_to_bytes(push);
  dispatch.reads = {src};
  dispatch.writes = {dst};
  dispatch.groups = groups_for(count, recorder.limits());
  return recorder.dispatch(dispatch);
}

Status record_transpose(const NodeArgs& args, Recorder& recorder) {
  const std::vector<int64_t>& in = args.input_dims[0];
  size_t rank = in.size();
  std::vector<int64_t> perm(rank);
  const Attribute* attr = args.node->attr("perm");
  for (size_t i = 0; i < rank; ++i) {
    perm[i] = attr != nullptr ? attr->as_ints()[i]
                              : static_cast<int64_t>(rank - 1 - i);
  }
  std::vector<int64_t> in_strides = row_major_strides(in);
  std::vector<int64_t> src_strides(rank);
  for (size_t i = 0; i < rank; ++i) src_strides[i] = in_strides[perm[i]];
  return strided_copy(args.inputs[0], args.outputs[0], args.output_dims[0],
                      src_strides, row_major_strides(args.output_dims[0]), 0, 0,
                      element_words(args.output_dtypes[0]), *args.node,
                      recorder);
}

Status record_concat(const NodeArgs& args, Recorder& recorder) {
  const std::vector<int64_t>& out = args.output_dims[0];
  int64_t axis = args.node->attr("axis")->as_int();
  if (axis < 0) axis += static_cast<int64_t>(out.size());
  std::vector<int64_t> out_strides = row_major_strides(out);
  int64_t at = 0;
  for (size_t i = 0; i < args.inputs.size(); ++i) {
    const std::vector<int64_t>& in = args.input_dims[i];
    if (element_count(in) == 0) continue;
    SEQRT_RETURN_IF_ERROR(strided_copy(
        args.inputs[i], args.outputs[0], in, row_major_strides(in), out_strides,
        0, at * out_strides[axis], element_words(args.output_dtypes[0]),
        *args.node, recorder));
    at += in[axis];
  }
  return Status::ok();
}

Status record_expand(const NodeArgs& args, Recorder& recorder) {
  const std::vector<int64_t>& out = args.output_dims[0];
  return strided_copy(
      args.inputs[0], args.outputs[0], out,
      broadcast_strides(args.input_dims[0], out), row_major_strides(out), 0, 0,
      element_words(args.output_dtypes[0]), *args.node, recorder);
}

// Slice with starts, axes or steps made on the device: shaders/slice.comp
// reads them while it runs.
Status record_device_slice(const NodeArgs& args, Recorder& recorder) {
  const std::vector<int64_t>& in = args.input_dims[0];
  const std::vector<int64_t>& out = args.output_dims[0];
  if (in.size() > kMaxRank) {
    return unsupported("{}: rank {} is over the Vulkan kernel's {}",
                       args.node->label(), in.size(), kMaxRank);
  }
  int64_t count = element_count(out);
  if (count == 0) return Status::ok();
  auto present = [&](size_t i) {
    return i < args.inputs.size() && !args.inputs[i].empty();
  };
  std::vector<uint32_t> words = {
      static_cast<uint32_t>(count), static_cast<uint32_t>(in.size()),
      static_cast<uint32_t>(element_count(args.input_dims[1]))};
  append_padded(words, in, 1);
  append_padded(words, out, 1);
  Dispatch dispatch;
  dispatch.shader = "slice";
  dispatch.specialization = {kLocalSize, element_words(args.output_dtypes[0]),
                             args.input_dtypes[1] == DType::kI64 ? 2u : 1u,
                             present(3) ? 1u : 0u, present(4) ? 1u : 0u};
  dispatch.push_constants = words_to_bytes(words);
  // Absent axes or steps are never read; starts stands in.
  dispatch.reads = {args.inputs[0], args.inputs[1],
                    present(3) ? args.inputs[3] : args.inputs[1],
                    present(4) ? args.inputs[4] : args.inputs[1]};
  dispatch.writes = {args.outputs[0]};
  dispatch.groups = groups_for(count, recorder.limits());
  return recorder.dispatch(dispatch);
}

// Slice: the output walks the input from each axis' clamped start with the
// axis' step (negative steps are negative strides).
Status record_slice(const NodeArgs& args, Recorder& recorder) {
  const Graph& graph = *args.graph;
  for (size_t i : {1, 3, 4}) {
    if (i < args.node->inputs.size() && args.node->inputs[i] != kNoValue &&
        !graph.is_constant(args.node->inputs[i])) {
      return record_device_slice(args, recorder);
    }
  }
  const std::vector<int64_t>& in = args.input_dims[0];
  std::vector<int64_t> starts = constant_ints(args, 1);
  std::vector<int64_t> axes = constant_ints(args, 3);
  std::vector<int64_t> steps = constant_ints(args, 4);
  std::vector<int64_t> strides = row_major_strides(in);
  std::vector<int64_t> src_strides = strides;
  int64_t base = 0;
  for (size_t i = 0; i < starts.size(); ++i) {
    size_t axis = static_cast<size_t>(
        i < axes.size() ? normalized_axis(axes[i], in.size()) : i);
    int64_t step = i < steps.size() ? steps[i] : 1;
    int64_t dim = in[axis];
    int64_t start = starts[i] < 0 ? starts[i] + dim : starts[i];
    start = step > 0 ? std::clamp<int64_t>(start, 0, dim)
                     : std::clamp<int64_t>(start, 0, dim - 1);
    if (args.output_dims[0][axis] == 0) start = 0;
    base += start * strides[axis];
    src_strides[axis] = step * strides[axis];
  }
  if (element_count(args.output_dims[0]) == 0) return Status::ok();
  return strided_copy(args.inputs[0], args.outputs[0], args.output_dims[0],
                      src_strides, row_major_strides(args.output_dims[0]), base,
                      0, element_words(args.output_dtypes[0]), *args.node,
                      recorder);
}

// Split: output k is the input from the running offset along the axis.
Status record_split(const NodeArgs& args, Recorder& recorder) {
  const std::vector<int64_t>& in = args.input_dims[0];
  size_t axis = static_cast<size_t>(
      normalized_axis(int_attr(*args.node, "axis", 0), in.size()));
  std::vector<int64_t> strides = row_major_strides(in);
  int64_t at = 0;
  for (size_t k = 0; k < args.outputs.size(); ++k) {
    const std::vector<int64_t>& out = args.output_dims[k];
    if (!args.outputs[k].empty() && element_count(out) > 0) {
      SEQRT_RETURN_IF_ERROR(strided_copy(
          args.inputs[0], args.outputs[k], out, strides, row_major_strides(out),
          at * strides[axis], 0, element_words(args.output_dtypes[k]),
          *args.node, recorder));
    }
    at += out[axis];
  }
  return Status::ok();
}

// Slice's and Split's index inputs may be made on the device from dims;
// Expand's shape likewise.
Status supports_planned_words(const Graph& graph, const Node& node,
                              const DeviceLimits& limits) {
  SEQRT_RETURN_IF_ERROR(supports_words(graph, node, limits));
  for (size_t i = 1; i < node.inputs.size(); ++i) {
    SEQRT_RETURN_IF_ERROR(require_shape_derived(graph, node, i));
  }
  return Status::ok();
}

}  // namespace

void register_copy_ops_kernels(KernelTable& table) {
  // A byte copy of any dtype. The shape or axes input is never read: the
  // plan has the output's dims (the executable refuses sizes known only at
  // run time).
  auto any_dtype = [](const Graph& graph, const Node& node,
                      const DeviceLimits&) {
    return require_shape_derived(graph, node, 1);
  };
  for (const char* op :
       {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity"}) {
    table.add({kOnnxDomain, op, any_dtype, nullptr,
               [](const NodeArgs& args, const KernelTiling&, Recorder& r) {
                 return record_view_copy(args, r);
               }});
  }
  table.add({kOnnxDomain, "Transpose", supports_words, nullptr,
             [](const NodeArgs& args, const KernelTiling&, Recorder& r) {
               return record_transpose(args, r);
             }});
  table.add({kOnnxDomain, "Concat", supports_words, nullptr,
             [](const NodeArgs& args, const KernelTiling&, Recorder& r) {
               return record_concat(args, r);
             }});
  table.add({kOnnxDomain, "Slice", supports_planned_words, nullptr,
             [](const NodeArgs& args, const KernelTiling&, Recorder& r) {
               return record_slice(args, r);
             }});
  table.add({kOnnxDomain, "Split", supports_planned_words, nullptr,
             [](const NodeArgs& args, const KernelTiling&, Recorder& r) {
               return record_split(args, r);
             }});
  table.add({kOnnxDomain, "Expand", supports_planned_words, nullptr,
             [](const NodeArgs& args, const KernelTiling&, Recorder& r) {
               return record_expand(args, r);
             }});
}

}  // namespace seqrt::vulkan
