// Pieces every sequence-op kernel of the Vulkan backend shares: the fp32
// check, reading attributes, and binding absent optional inputs (the
// shaders always declare every binding; an absent one gets a stand-in the
// shader never reads, told apart by a flag in the push constants).
#pragma once

#include <string>

#include "backends/vulkan/kernel.h"
#include "ops/sequence/scan_common.h"

namespace seqrt::vulkan {

// kUnsupported naming the first input or output of `node` that is present
// and not fp32.
Status require_fp32(const Graph& graph, const Node& node,
                    const std::string& what);

int64_t int_attr(const Node& node, const std::string& name, int64_t fallback);
std::string string_attr(const Node& node, const std::string& name,
                        const std::string& fallback);

// The planned dims and dtypes of the node's first `count` inputs, for the
// op's contract check (ops/sequence/<op>.h).
KernelInputTypes input_types(const NodeArgs& args, size_t count);

// The i-th input, or an empty slice when absent / out of range.
BufferSlice input_or_empty(const NodeArgs& args, size_t i);
// The i-th output, or an empty slice when not requested.
BufferSlice output_or_empty(const NodeArgs& args, size_t i);
// `slice`, or `stand_in` when `slice` is empty.
BufferSlice or_stand_in(const BufferSlice& slice, const BufferSlice& stand_in);

// The dims of input i, or an error naming the op when it has not `rank`.
Result<std::vector<int64_t>> dims_of(const NodeArgs& args, size_t i,
                                     size_t rank, const std::string& what);

// A token-loop dispatch cut into segments (tiling.h, kMaxLoopIterations).
// `base` holds the bindings of one whole-sequence call; its push constants
// are `words` followed by t_begin, t_end. Segment k > 0 reads the state
// segment k - 1 left in a carrier (the present output when requested, else
// scratch memory); every segment but the last writes it there.
struct SegmentedDispatch {
  Dispatch base;
  std::vector<uint32_t> words;
  size_t flags_word = 0;  // which word holds the flags
  uint32_t has_past = 0;  // flag bits
  uint32_t has_present = 0;
  size_t past_read = 0;      // index of the past state in base.reads
  size_t present_write = 0;  // index of the present state in base.writes
};
Status record_segments(const SegmentedDispatch& d, int64_t length,
                       uint32_t segment, uint64_t state_bytes,
                       Recorder& recorder);

// kInvalidArgument when a grid dimension exceeds the device's limit.
Status check_groups(const std::array<uint32_t, 3>& groups,
                    const DeviceLimits& limits, const std::string& what);

}  // namespace seqrt::vulkan
