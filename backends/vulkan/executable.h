// A graph compiled for the Vulkan backend: constants uploaded once; per
// signature of input dims, a memory plan (graph/planner) placed on the
// device and the whole schedule recorded once into a Program that every
// run with those dims replays (upload inputs, submit, wait, download).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "backends/backend.h"
#include "backends/vulkan/memory.h"
#include "backends/vulkan/pipelines.h"
#include "backends/vulkan/recorder.h"
#include "graph/planner/memory_plan.h"

namespace seqrt::vulkan {

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

class VulkanExecutable : public Executable {
 public:
  static Result<std::unique_ptr<VulkanExecutable>> create(
      DeviceContext context, Graph graph, const CompileOptions& options);
  ~VulkanExecutable() override;

  Result<std::vector<Tensor>> run(std::vector<Tensor> inputs) const override;

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
  int programs_recorded() const;

 private:
  struct Prepared;
  VulkanExecutable(DeviceContext context, Graph graph,
                   const CompileOptions& options);
  Status upload_constants();
  Result<std::shared_ptr<Prepared>> prepare(
      const std::vector<Tensor>& inputs) const;
  Result<std::shared_ptr<Prepared>> build(
      const std::map<std::string, int64_t>& bindings) const;
  // Copies the kernels' error words out at the end of the program, and
  // checks them after a run (Recorder::error_word).
  Status record_error_copies(CommandRecorder& recorder,
                             Prepared& prepared) const;
  Status check_error_words(const Prepared& prepared) const;

  DeviceContext context_;
  Graph graph_;
  std::map<std::string, int64_t> dim_bindings_;
  std::map<ValueId, std::unique_ptr<Allocation>> constants_;
  mutable std::mutex mutex_;  // one run at a time; guards prepared_
  mutable std::map<std::vector<std::vector<int64_t>>, std::shared_ptr<Prepared>>
      prepared_;
};

}  // namespace seqrt::vulkan
