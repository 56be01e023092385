// VulkanExecutable's prepared memory and recordings, shared by
// executable.cc (which makes and runs them), executable_state.cc (a
// Stream's state and its programs) and executable_plan.cc (which shows
// them). Internal to backends/vulkan.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backends/vulkan/executable.h"
#include "backends/vulkan/scan.h"
#include "compiler/planner/memory_plan.h"

namespace seqrt::vulkan {

// An error when the device logged validation messages since `before`.
Status check_validation(const Device& device, int64_t before);

// Everything one signature of input dims needs: the plan and its memory.
struct VulkanExecutable::Prepared {
  MemoryPlan plan;
  std::vector<std::unique_ptr<Allocation>> memory;  // arena, io, own values
  std::vector<BufferSlice> places;                  // by ValueId
  std::unique_ptr<Allocation> staging;
  std::vector<VkDeviceSize> input_at, output_at;  // offsets in staging
  // The host parameters' values this plan and its recordings are for.
  std::map<ValueId, Tensor> host_values;
  uint64_t used = 0;  // when run() last took it (least recently used goes)
  // The program run() replays (every input and output staged), recorded
  // at the first run(): a Stream's state records its own instead.
  std::unique_ptr<Recorded> recorded;
};

// One recording of the schedule over a Prepared's memory: one program, or
// where Scans run as loops, the programs between them and the loops'
// bodies, submitted together in `submission` order.
struct VulkanExecutable::Recorded {
  std::vector<NodeTiling> tilings;
  // Error words (Recorder::error_word) of every program, copied out after
  // every run: word i is set when node error_nodes[i] found
  // `error_problems[i]`.
  std::unique_ptr<Allocation> error_staging;
  std::vector<BufferSlice> error_words;
  std::vector<int> error_nodes;
  std::vector<std::string> error_problems;
  size_t words_taken = 0;  // of the recorder in use
  std::vector<std::unique_ptr<Program>> programs;
  std::vector<std::unique_ptr<RecordedScan>> scans;
  std::vector<VkCommandBuffer> submission;
};

}  // namespace seqrt::vulkan
