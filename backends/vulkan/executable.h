// A graph compiled for the Vulkan backend: constants uploaded once; per
// signature of input dims, a memory plan (compiler/planner) placed on the
// device and the whole schedule recorded once into a Program that every
// run with those dims replays (upload inputs, submit, wait, download).
//
// A Stream's state (create_state) lives in device buffers of its own, two
// per state pair. The programs recorded for a state bind the pair's input
// to the buffer holding it and its output to the other one (ping-pong), or
// to the same one where the output overwrites the input element by element
// (an elementwise op such as a Where that writes a fixed-capacity KV
// cache), so a step uploads and downloads only its other inputs and
// outputs. Each state keeps the few programs recorded for its buffers.
//
// Host parameters (kernels/kernel_util.h): a parameter input of a kernel
// (Reshape's shape, Slice's starts, Tile's repeats...) that is a small
// graph input is read on the host at each run; the recording is made for
// its value, so the cache key is (input dims, host parameter values). The
// cache keeps the kMaxRecordings most recently used recordings, so a
// parameter that changes every run re-records but holds bounded memory.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

#include "backends/backend.h"
#include "backends/vulkan/memory.h"
#include "backends/vulkan/pipelines.h"
#include "backends/vulkan/recorder.h"
#include "compiler/planner/memory_plan.h"

namespace seqrt::vulkan {

struct ScanBody;
struct ScanOuter;

struct DeviceContext {
  std::shared_ptr<Device> device;
  std::shared_ptr<Allocator> allocator;
  std::shared_ptr<Pipelines> pipelines;
};

// Copies host bytes into `dst` through a staging buffer (waits).
Status upload(const DeviceContext& context, const BufferSlice& dst,
              const void* data, size_t bytes, const char* doing);
Status download(const DeviceContext& context, const BufferSlice& src,
                void* data, size_t bytes, const char* doing);

// Bytes of tensor data moved between host and device (constants, inputs,
// outputs, states written or read back; not the 4-byte error words), so
// tests can check what a step transfers.
struct TransferCounts {
  uint64_t to_device = 0;
  uint64_t to_host = 0;
};
// Every Vulkan transfer of this process (a Session's executable is out of
// a test's reach): take differences around a step in one thread.
TransferCounts process_transfers();

class VulkanExecutable : public Executable {
 public:
  // Recordings (with their memory plans) run() keeps, least recently used
  // dropped first.
  static constexpr size_t kMaxRecordings = 16;

  static Result<std::unique_ptr<VulkanExecutable>> create(
      DeviceContext context, Graph graph, const CompileOptions& options);
  ~VulkanExecutable() override;

  Result<std::vector<Tensor>> run(std::vector<Tensor> inputs) const override;

  bool keeps_state_on_device() const override { return true; }
  Result<std::unique_ptr<ExecutableState>> create_state(
      const std::vector<Tensor>& state) const override;
  Result<std::vector<Tensor>> run_with_state(
      std::vector<Tensor> inputs, ExecutableState& state) const override;
  Result<std::vector<Tensor>> read_state(
      const ExecutableState& state) const override;
  Status write_state(ExecutableState& state,
                     const std::vector<Tensor>& tensors) const override;
  // This executable's transfers so far.
  TransferCounts transfers() const {
    return {to_device_.load(), to_host_.load()};
  }

  // One line per node of the plan for these input dims: the kernel's
  // tiling where it has one (seqrt inspect --plan --backend vulkan).
  struct NodeTiling {
    int node = 0;
    KernelTiling tiling;
  };
  Result<std::vector<NodeTiling>> tilings(
      const std::map<std::string, int64_t>& bindings) const;
  Result<std::vector<KernelPlanEntry>> kernel_plan(
      const std::map<std::string, int64_t>& bindings) const override;
  // Programs recorded for run() and kept now (a state's own programs are
  // not counted); at most kMaxRecordings.
  int programs_recorded() const;
  // Programs run() has recorded so far, those dropped since included: a
  // run whose dims and host parameter values are cached adds none.
  int recordings_made() const { return recordings_made_.load(); }

  // What a recording for these dims holds: nodes of the graph and of the
  // bodies of the Scans that run as loops (scan.h), dispatches recorded
  // in all programs, and command buffers submitted per run (a loop's body
  // once per step).
  struct RecordingStats {
    int nodes = 0;
    int loop_scans = 0;
    int dispatches = 0;
    size_t submitted = 0;
  };
  Result<RecordingStats> recording_stats(
      const std::map<std::string, int64_t>& bindings) const;

 private:
  struct Prepared;
  struct Recorded;
  class State;
  VulkanExecutable(DeviceContext context, Graph graph,
                   const CompileOptions& options);
  Status upload_constants();
  // The plan and memory for these dims of the graph's inputs and the
  // values of its host parameters, taken from `fed` (by graph input).
  Result<std::shared_ptr<Prepared>> prepare(
      const std::vector<std::vector<int64_t>>& dims,
      const std::vector<const Tensor*>& fed) const;
  Result<std::shared_ptr<Prepared>> build(
      const std::map<std::string, int64_t>& bindings,
      std::map<ValueId, Tensor> host_values = {}) const;
  // The cache key's second half: the bytes of the host parameters in
  // `fed`, which must each hold at most kMaxHostParameterElements.
  Result<std::vector<uint8_t>> host_key(
      const std::vector<const Tensor*>& fed) const;
  // Records the schedule over `prepared`'s memory; `state_places` (state
  // pairs' inputs and outputs) replace their places and are not staged.
  Result<std::unique_ptr<Recorded>> record(
      Prepared& prepared,
      const std::map<ValueId, BufferSlice>& state_places) const;
  // Built and recorded at `bindings` over the compile's, for inspection
  // (executable_plan.cc); takes the lock.
  Result<std::unique_ptr<Recorded>> record_for_inspection(
      const std::map<std::string, int64_t>& bindings) const;
  // Records graph_.nodes[index], a Scan that runs as a loop: ends the
  // current program, adds the body programs once per step to the
  // submission and starts the next program in `recorder`.
  Status record_loop_scan(int index, const Prepared& prepared,
                          const std::vector<BufferSlice>& places,
                          std::unique_ptr<CommandRecorder>& recorder,
                          Recorded& recorded) const;
  // Ends the program in `recorder` (appended to the submission) and, with
  // `next`, starts another whose first step is a barrier.
  Status finish_program(std::unique_ptr<CommandRecorder>& recorder,
                        Recorded& recorded, bool next) const;
  // Takes the error words `recorder` asked for since the last call as
  // node `index`'s.
  void take_error_words(const CommandRecorder& recorder, int index,
                        Recorded& recorded) const;
  // Copies every error word out at the end of the last program, and
  // checks them after a run (Recorder::error_word).
  Status record_error_copies(CommandRecorder& recorder,
                             Recorded& recorded) const;
  Status check_error_words(const Recorded& recorded) const;
  // Stages `fed` (by graph input; null: bound on the device), runs, and
  // returns the graph's outputs except those in `kept`.
  Result<std::vector<Tensor>> execute(const Prepared& prepared,
                                      const Recorded& recorded,
                                      const std::vector<const Tensor*>& fed,
                                      const std::vector<bool>& kept) const;
  Result<State*> own_state(const ExecutableState& state) const;
  Status check_state_tensors(const std::vector<Tensor>& tensors) const;
  void count(bool to_device, uint64_t bytes) const;

  DeviceContext context_;
  Graph graph_;
  std::map<std::string, int64_t> dim_bindings_;
  std::map<ValueId, std::unique_ptr<Allocation>> constants_;
  // Weights stored as fp16 on the device (Device::fp16_weights); their
  // kernels see them as kF16.
  std::set<ValueId> half_weights_;
  // The Scans that run as loops, by node index (scan.h).
  std::map<int, std::unique_ptr<ScanBody>> scan_bodies_;
  // Indices into graph_.inputs of the host parameters.
  std::vector<size_t> host_parameters_;
  mutable std::mutex mutex_;  // one run at a time; guards prepared_
  using Key =
      std::pair<std::vector<std::vector<int64_t>>, std::vector<uint8_t>>;
  mutable std::map<Key, std::shared_ptr<Prepared>> prepared_;
  mutable uint64_t clock_ = 0;  // for Prepared::used
  mutable std::atomic<int> recordings_made_{0};
  mutable std::atomic<uint64_t> to_device_{0}, to_host_{0};
};

}  // namespace seqrt::vulkan
