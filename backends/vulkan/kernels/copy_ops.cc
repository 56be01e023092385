// Data-movement ops. Reshape-like ops are one buffer copy (the executable
// skips it when both sides share memory); Transpose and Concat are the
// strided-copy shader over 32-bit words (f32, i32, i64 tensors).
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

// Words per element, or 0 when the dtype is not a whole number of words.
uint32_t element_words(DType dtype) {
  size_t size = dtype_size(dtype);
  return size % 4 == 0 ? static_cast<uint32_t>(size / 4) : 0;
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

}  // namespace

void register_copy_ops_kernels(KernelTable& table) {
  for (const char* op :
       {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity"}) {
    table.add({kOnnxDomain, op, nullptr, nullptr,
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
  table.add({kOnnxDomain, "Expand", supports_words, nullptr,
             [](const NodeArgs& args, const KernelTiling&, Recorder& r) {
               return record_expand(args, r);
             }});
}

}  // namespace seqrt::vulkan
