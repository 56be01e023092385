// GatherND (shaders/gather_nd.comp) over f32, i32, i64, bools and halves.
#include <fmt/format.h>

#include "backends/vulkan/kernels/kernel_util.h"
#include "ops/node_attrs.h"

namespace seqrt::vulkan {
namespace {

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
  const int64_t b = node_attr_int(*args.node, "batch_dims");
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

}  // namespace

void register_gather_nd_kernels(KernelTable& table) {
  table.add({kOnnxDomain, "GatherND", supports_gather_nd, nullptr,
             [](const NodeArgs& args, const KernelTiling&, Recorder& r) {
               return record_gather_nd(args, r);
             }});
}

}  // namespace seqrt::vulkan
