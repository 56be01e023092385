// Shared helpers of the sequence-op kernels (sequence_util.h).
#include "backends/vulkan/kernels/sequence_util.h"

#include <fmt/format.h>

namespace seqrt::vulkan {

Status require_fp32(const Graph& graph, const Node& node,
                    const std::string& what) {
  auto check = [&](ValueId id, const char* kind, size_t i) -> Status {
    if (id == kNoValue) return Status::ok();
    const Value& value = graph.value(id);
    if (value.dtype == DType::kF32) return Status::ok();
    return unsupported("{} (vulkan): only fp32 kernels, {} {} '{}' is {}", what,
                       kind, i, value.name, dtype_name(value.dtype));
  };
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    SEQRT_RETURN_IF_ERROR(check(node.inputs[i], "input", i));
  }
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    SEQRT_RETURN_IF_ERROR(check(node.outputs[i], "output", i));
  }
  return Status::ok();
}

int64_t int_attr(const Node& node, const std::string& name, int64_t fallback) {
  const Attribute* attr = node.attr(name);
  return attr == nullptr ? fallback : attr->as_int();
}

std::string string_attr(const Node& node, const std::string& name,
                        const std::string& fallback) {
  const Attribute* attr = node.attr(name);
  return attr == nullptr ? fallback : attr->as_string();
}

BufferSlice input_or_empty(const NodeArgs& args, size_t i) {
  return i < args.inputs.size() ? args.inputs[i] : BufferSlice{};
}

BufferSlice output_or_empty(const NodeArgs& args, size_t i) {
  return i < args.outputs.size() ? args.outputs[i] : BufferSlice{};
}

BufferSlice or_stand_in(const BufferSlice& slice, const BufferSlice& stand_in) {
  return slice.empty() ? stand_in : slice;
}

Result<std::vector<int64_t>> dims_of(const NodeArgs& args, size_t i,
                                     size_t rank, const std::string& what) {
  if (i >= args.input_dims.size() || args.input_dims[i].size() != rank) {
    return invalid_argument("{} (vulkan): input {} must have rank {}", what, i,
                            rank);
  }
  return args.input_dims[i];
}

Status check_groups(const std::array<uint32_t, 3>& groups,
                    const DeviceLimits& limits, const std::string& what) {
  for (size_t axis = 0; axis < 3; ++axis) {
    if (groups[axis] > limits.max_group_count[axis]) {
      return invalid_argument(
          "{} (vulkan): {} workgroups on axis {} exceed the device's {}", what,
          groups[axis], axis, limits.max_group_count[axis]);
    }
  }
  return Status::ok();
}

}  // namespace seqrt::vulkan
