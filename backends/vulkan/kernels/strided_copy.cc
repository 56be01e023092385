#include "backends/vulkan/kernels/strided_copy.h"

namespace seqrt::vulkan {

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

Status supports_words(const Graph& graph, const Node& node,
                      const DeviceLimits& /*limits*/) {
  DType dtype = graph.value(node.outputs[0]).dtype;
  if (element_words(dtype) == 0) {
    return unsupported(
        "{}: {} tensors are not whole 32-bit words; the Vulkan "
        "copy kernels take f32, i32 and i64",
        node.label(), dtype_name(dtype));
  }
  return Status::ok();
}

Status supports_planned_words(const Graph& graph, const Node& node,
                              const DeviceLimits& limits) {
  SEQRT_RETURN_IF_ERROR(supports_words(graph, node, limits));
  for (size_t i = 1; i < node.inputs.size(); ++i) {
    SEQRT_RETURN_IF_ERROR(require_host_known(graph, node, i));
  }
  return Status::ok();
}

}  // namespace seqrt::vulkan
