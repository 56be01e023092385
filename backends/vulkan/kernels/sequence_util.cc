// Shared helpers of the sequence-op kernels (sequence_util.h).
#include "backends/vulkan/kernels/sequence_util.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

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

KernelInputTypes input_types(const NodeArgs& args, size_t count) {
  return dims_input_types(args.input_dims, args.input_dtypes, count);
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

Status record_segments(const SegmentedDispatch& d, int64_t length,
                       uint32_t segment, uint64_t state_bytes,
                       Recorder& recorder) {
  const int64_t count =
      length <= segment ? 1 : (length + segment - 1) / segment;
  const uint32_t flags = d.words[d.flags_word];
  BufferSlice carrier;
  if (count > 1) {
    if ((flags & d.has_present) != 0) {
      carrier = d.base.writes[d.present_write];
    } else {
      SEQRT_ASSIGN_OR_RETURN(carrier, recorder.scratch(state_bytes));
    }
  }
  for (int64_t k = 0; k < count; ++k) {
    Dispatch dispatch = d.base;
    std::vector<uint32_t> words = d.words;
    if (k > 0) {
      words[d.flags_word] |= d.has_past;
      dispatch.reads[d.past_read] = carrier;
    }
    if (k + 1 < count) {
      words[d.flags_word] |= d.has_present;
      dispatch.writes[d.present_write] = carrier;
    }
    words.push_back(static_cast<uint32_t>(k * segment));
    words.push_back(static_cast<uint32_t>(
        std::min<int64_t>(length, (k + 1) * static_cast<int64_t>(segment))));
    dispatch.push_constants.resize(4 * words.size());
    std::memcpy(dispatch.push_constants.data(), words.data(),
                dispatch.push_constants.size());
    SEQRT_RETURN_IF_ERROR(recorder.dispatch(dispatch));
  }
  return Status::ok();
}

Status check_groups(const std::array<uint32_t, 3>& groups,
                    const DeviceLimits& limits, const std::string& what) {
  for (size_t axis = 0; axis < 3; ++axis) {
    if (groups[axis] > limits.max_group_count[axis]) {
      return make_error(
          StatusCode::kLimitExceeded,
          "{} (vulkan): {} workgroups on axis {} exceed the device's {}", what,
          groups[axis], axis, limits.max_group_count[axis]);
    }
  }
  return Status::ok();
}

}  // namespace seqrt::vulkan
