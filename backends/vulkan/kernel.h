// The Vulkan backend's kernel contract: what a kernel family sees of the device
// (limits, buffer slices, a recorder) and the one table from ops to kernels.
// Kernels never touch Vulkan objects directly; they describe dispatches and the
// recorder records them.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <string>
#include <utility>
#include <vector>

#ifndef VK_NO_PROTOTYPES
#define VK_NO_PROTOTYPES
#endif
#include <vulkan/vulkan.h>

#include "backends/kernel_table.h"
#include "graph/graph.h"

namespace seqrt::vulkan {

enum class SequenceForms { kAuto, kRecurrent, kChunked };

// What kernels may rely on; read from the device, some forced by tests.
struct DeviceLimits {
  uint32_t shared_memory_bytes =
      0;  // maxComputeSharedMemorySize (or a forced lower value)
  uint32_t max_invocations = 0;               // maxComputeWorkGroupInvocations
  std::array<uint32_t, 3> max_group_count{};  // maxComputeWorkGroupCount
  uint32_t subgroup_size = 0;
  bool subgroup_arithmetic =
      false;  // compute stage has arithmetic+shuffle (or forced off)
  uint64_t max_storage_buffer_range = 0;  // bytes one binding may span
  uint64_t storage_buffer_offset_alignment = 0;
  bool fp16_storage = false;
  // Single-row products (M = 1) by the GEMV shader rather than the tiled
  // GEMM (off: VulkanOptions::disable_gemv, SEQRT_VULKAN_NO_GEMV=1).
  bool gemv = true;
  // Which forms the sequence ops take (VulkanOptions::forms,
  // SEQRT_VULKAN_FORMS): kAuto the chunk-parallel forms where they pay,
  // kRecurrent only the recurrent ones, kChunked the chunked forms also
  // where they pay only with a GPU's parallelism (the delta rules).
  SequenceForms forms = SequenceForms::kAuto;
  // A CPU implementation (lavapipe): the chunked delta rules stay off
  // under kAuto.
  bool cpu_device = false;
  bool chunked_forms() const { return forms != SequenceForms::kRecurrent; }
};

// A tensor's place on the device: a range of one buffer (offset aligned).
struct BufferSlice {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceSize offset = 0;
  VkDeviceSize bytes = 0;
  bool empty() const { return buffer == VK_NULL_HANDLE; }
};

// The kernel-level plan of one node (DESIGN.md §5.2), kept in the plan and
// printed by `seqrt inspect --plan --backend vulkan`.
struct KernelTiling {
  std::string
      summary;  // e.g. "64 channels x 16 states per workgroup, chunk 64"
  std::string
      state_place;  // "registers", "shared memory" or "" (no running state)
  uint32_t shared_bytes = 0;  // shared memory per workgroup this tiling uses
  uint32_t shared_limit = 0;  // the limit it was chosen under
  std::vector<uint32_t>
      constants;  // kernel-specific numbers the record step reuses
};

struct Dispatch {
  std::string shader;                    // embedded shader name
  std::vector<uint32_t> specialization;  // constant_id k = specialization[k]
  std::vector<uint8_t> push_constants;   // <= 128 bytes
  std::vector<BufferSlice> reads;        // bindings 0..r-1
  std::vector<BufferSlice> writes;       // bindings r..r+w-1
  std::array<uint32_t, 3> groups{1, 1, 1};
};

// Records work into the plan's command buffer. Barriers are the recorder's
// job: it inserts a compute->compute memory barrier before a dispatch that
// reads or writes a range written by an earlier dispatch (or writes a range
// an earlier dispatch read) since the last barrier.
class Recorder {
 public:
  virtual ~Recorder() = default;
  virtual const DeviceLimits& limits() const = 0;
  // Fails on a slice over max range, a bad shader name...
  virtual Status dispatch(const Dispatch& dispatch) = 0;
  // Device memory for this node only, live until the node's last dispatch
  // (chunk states, split-K partials).
  virtual Result<BufferSlice> scratch(VkDeviceSize bytes) = 0;
  virtual Status copy(const BufferSlice& src, const BufferSlice& dst) = 0;
  virtual Status fill(const BufferSlice& dst, uint32_t word) = 0;  // e.g. zeros
  // A 4-byte word, zero at the start of every run, that the node's shader
  // sets (to any nonzero value) when it finds input only the device sees and
  // the op rejects, such as an index out of range; the run then fails with
  // `problem` after the node's label. Recorders that check none refuse.
  virtual Result<BufferSlice> error_word(const std::string& problem) {
    return unsupported("vulkan: this recorder checks no error words ({})",
                       problem);
  }
};

// One node with concrete shapes and device places.
struct NodeArgs {
  const Graph* graph = nullptr;
  const Node* node = nullptr;
  std::vector<BufferSlice> inputs;  // empty() for an absent optional input
  std::vector<std::vector<int64_t>> input_dims;
  std::vector<DType> input_dtypes;
  std::vector<BufferSlice> outputs;
  std::vector<std::vector<int64_t>> output_dims;
  std::vector<DType> output_dtypes;
  // Per input: its value where recording can know it (a constant, or
  // shape arithmetic the plan computed for this binding of the dims);
  // null otherwise.
  std::vector<const Tensor*> known_inputs;
};

struct VulkanKernel {
  std::string domain;  // kOnnxDomain or kSeqrtDomain
  std::string op;
  // Null: every node passing the op schema with fp32 tensors. Else
  // kUnsupported naming what is lacking.
  std::function<Status(const Graph&, const Node&, const DeviceLimits&)>
      supports;
  // Optional (sequence ops must have it): the tiling for these shapes under
  // these limits.
  std::function<Result<KernelTiling>(const NodeArgs&, const DeviceLimits&)>
      plan;
  std::function<Status(const NodeArgs&, const KernelTiling&, Recorder&)> record;
};

using KernelTable = seqrt::KernelTable<VulkanKernel>;

const KernelTable& kernel_table();

// Helpers every kernel uses.
// Packs 32-bit words (floats via float_word) into push-constant bytes.
std::vector<uint8_t> push_bytes(std::initializer_list<uint32_t> words);
// The bits of a float, for push_bytes and specialisation constants.
uint32_t float_word(float value);

}  // namespace seqrt::vulkan
