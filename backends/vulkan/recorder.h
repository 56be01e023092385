// The recorder kernels write into, and the program it makes: a command
// buffer recorded once (per input-shape signature) and replayed each run.
// Steps are collected first and recorded at finish(), when the number of
// descriptor sets is known; barriers are placed as steps are added.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backends/vulkan/kernel.h"
#include "backends/vulkan/memory.h"
#include "backends/vulkan/pipelines.h"

namespace seqrt::vulkan {

// A recorded command buffer and everything it refers to that it owns.
class Program {
 public:
  Program(std::shared_ptr<Device> device) : device_(std::move(device)) {}
  ~Program();
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  // Submits the commands and waits for them.
  Status run(const char* doing) const;
  // The command buffer, recorded for simultaneous use: a Scan's body
  // program appears once per step in one submission (run_programs).
  VkCommandBuffer commands() const { return commands_; }
  int dispatches() const { return dispatches_; }
  int barriers() const { return barriers_; }

 private:
  friend class CommandRecorder;
  std::shared_ptr<Device> device_;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkCommandBuffer commands_ = VK_NULL_HANDLE;
  VkDescriptorPool descriptors_ = VK_NULL_HANDLE;
  std::vector<std::unique_ptr<Allocation>> scratch_;
  int dispatches_ = 0;
  int barriers_ = 0;
};

class CommandRecorder : public Recorder {
 public:
  CommandRecorder(std::shared_ptr<Device> device, Pipelines& pipelines,
                  Allocator& allocator);

  const DeviceLimits& limits() const override { return device_->limits(); }
  Status dispatch(const Dispatch& dispatch) override;
  Result<BufferSlice> scratch(VkDeviceSize bytes) override;
  Status copy(const BufferSlice& src, const BufferSlice& dst) override;
  Status fill(const BufferSlice& dst, uint32_t word) override;
  Result<BufferSlice> error_word(const std::string& problem) override;

  // The error words asked for so far, in order, each with its problem.
  struct ErrorWord {
    BufferSlice word;
    std::string problem;
  };
  const std::vector<ErrorWord>& error_words() const { return error_words_; }

  // A full barrier before the next step: it orders what follows after
  // every earlier step and earlier submission to the queue (a program
  // whose buffers the previous run's program also used).
  void barrier();

  // Error words asked for from now on are not zeroed here: a Scan's body
  // program runs once per step, so its words are zeroed once before the
  // loop by the program that precedes it (the caller's job).
  void defer_error_word_zeroing() { zero_error_words_ = false; }

  // Records every step into a new command buffer; the recorder is spent.
  Result<std::unique_ptr<Program>> finish();

  // Counts so far (tests check barrier placement).
  int barrier_count() const;

 private:
  enum class Kind { kDispatch, kCopy, kFill, kBarrier };
  struct Step {
    Kind kind;
    Pipeline pipeline;
    std::vector<uint8_t> push;
    std::vector<BufferSlice> bindings;
    std::array<uint32_t, 3> groups{};
    BufferSlice src, dst;
    uint32_t word = 0;
  };
  // Adds a barrier when `reads`/`writes` touch a range in flight, then
  // marks them in flight.
  void order(const std::vector<BufferSlice>& reads,
             const std::vector<BufferSlice>& writes);

  std::shared_ptr<Device> device_;
  Pipelines& pipelines_;
  Allocator& allocator_;
  std::vector<Step> steps_;
  std::vector<BufferSlice> written_, read_;  // since the last barrier
  std::vector<ErrorWord> error_words_;
  bool zero_error_words_ = true;
  std::unique_ptr<Program> program_;
};

}  // namespace seqrt::vulkan
