// The executable of a graph split between backends (runtime/multi_backend.h):
// the segments' executables run in order over one table of host tensors.
// A Stream's state pairs that a device segment alone reads and writes
// (Segment::held_states) stay on that device between steps through the
// segment's own state calls; the other pairs are carried as host tensors.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "backends/backend.h"
#include "compiler/partition/partition.h"

namespace seqrt {

class PartitionedExecutable : public Executable {
 public:
  struct Part {
    std::unique_ptr<Executable> executable;
    std::string label;  // "segment 2 (cpu)"
    std::vector<std::string> inputs, outputs;
    // Whole-graph state pairs this part keeps on its device, in its
    // graph's state_pairs order (empty when its executable cannot).
    std::vector<int> held;
    // Per input / output: a held state's, so not fed or returned by
    // run_with_state().
    std::vector<bool> held_input, held_output;
    std::vector<bool> last_read;  // per input: no later part reads it
  };

  // `parts` follow partition.segments; their executables are compiled.
  PartitionedExecutable(const Graph& graph, Partition partition,
                        std::vector<PartitionTarget> targets,
                        std::vector<Part> parts);

  Result<std::vector<Tensor>> run(std::vector<Tensor> inputs) const override;

  bool keeps_state_on_device() const override { return holds_state_; }
  Result<std::unique_ptr<ExecutableState>> create_state(
      const std::vector<Tensor>& state) const override;
  Result<std::vector<Tensor>> run_with_state(
      std::vector<Tensor> inputs, ExecutableState& state) const override;
  Result<std::vector<Tensor>> read_state(
      const ExecutableState& state) const override;
  Status write_state(ExecutableState& state,
                     const std::vector<Tensor>& tensors) const override;

  std::vector<NodeProfile> profile() const override;
  Result<std::vector<KernelPlanEntry>> kernel_plan(
      const std::map<std::string, int64_t>& bindings) const override;
  std::string placement_report(
      const std::map<std::string, int64_t>& bindings) const override;

 private:
  class State;
  using Values = std::unordered_map<std::string, Tensor>;

  Result<State*> own_state(const ExecutableState& state) const;
  // Runs every part over `values`; with a state, held states stay in it.
  Status run_parts(Values& values, State* state) const;
  // Graph outputs (without the state outputs where `skip_state`).
  Result<std::vector<Tensor>> collect(Values& values, bool skip_state) const;

  Partition partition_;
  std::vector<PartitionTarget> targets_;
  std::vector<Part> parts_;
  std::vector<std::string> inputs_, outputs_;
  std::vector<bool> state_input_, state_output_;   // per graph input / output
  std::vector<std::string> state_in_, state_out_;  // per state pair
  std::vector<int> holder_;  // per state pair: the part holding it, or -1
  bool holds_state_ = false;
  Values constant_outputs_;
};

}  // namespace seqrt
