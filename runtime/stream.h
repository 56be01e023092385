// The state of one sequence on a Session whose graph has state pairs
// (DESIGN.md §4). Each run feeds the held past_* tensors and keeps the
// present_* outputs for the next run, so a prompt is prefilled once and then
// decoded step by step:
//
//   Stream stream(*session);
//   SEQRT_ASSIGN_OR_RETURN(auto out, stream.run({{"x", prompt}}));  // prefill
//   SEQRT_ASSIGN_OR_RETURN(out, stream.run({{"x", next_token}}));   // step
//
// The first run starts from each pair's initial value (or zeros). A Stream
// is one sequence: use one per thread; several Streams may share a Session.
//
// On a host backend the Stream hands its state to each run as the only
// handle to it, so a kernel that replaces a state may update it in place: a
// fixed-capacity KV cache written by TensorScatter costs the new rows, not a
// copy of the cache. Holding a snapshot() keeps that state intact (the run
// then copies it), so take snapshots when needed, not every step.
//
// On a backend that keeps state on its device (Executable::create_state,
// e.g. Vulkan) the first run copies the state there once and later runs
// leave it there: a step moves only its other inputs and outputs.
// snapshot() then reads the state back and restore() writes it at the next
// run, so both cost a copy of the state.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "runtime/session.h"

namespace seqrt {

class Stream {
 public:
  // Borrows `session`, which must outlive the Stream.
  explicit Stream(const Session& session) : session_(session) {}

  // Runs with `feeds` plus the held state; the present_* outputs become the
  // state for the next run, and every other output is returned. A state
  // input fed explicitly replaces the held state for this run. Bad feeds
  // (names, dtypes, shapes) leave the state unchanged; a run that fails
  // after that resets the Stream (its error says so), since the state may
  // have been partly updated in place.
  Result<std::map<std::string, Tensor>> run(
      const std::map<std::string, Tensor>& feeds);

  // The held state by state-input name (empty before the first run). The
  // tensors are immutable, so a snapshot stays valid while the Stream runs
  // on; restore() makes a snapshot the state again. Where the state is on
  // the device and reading it back fails (the device lost), the map is
  // empty: read_snapshot() says why.
  std::map<std::string, Tensor> snapshot() const;
  Result<std::map<std::string, Tensor>> read_snapshot() const;
  // Replaces the state; every name must be a state input of the graph.
  Status restore(std::map<std::string, Tensor> state);
  // Back to the initial state.
  void reset() {
    state_.clear();
    on_device_ = false;
  }

 private:
  // The graph's inputs from bind_inputs: the state goes to the device if
  // the executable keeps it there, else the run is today's host run.
  Result<std::map<std::string, Tensor>> run_bound(std::vector<Tensor> inputs);
  // A run with the state already on the device.
  Result<std::map<std::string, Tensor>> step_on_device(
      const std::map<std::string, Tensor>& feeds);
  Result<std::map<std::string, Tensor>> run_with_state(
      std::vector<Tensor> inputs);

  const Session& session_;
  // The state on the host: all of it on a host backend; on a device one,
  // the state to load at the next run (after restore() or reset()).
  std::map<std::string, Tensor> state_;
  // The state on the device; kept after a reset so its buffers (and the
  // programs recorded for them) are reused.
  std::unique_ptr<ExecutableState> device_state_;
  bool on_device_ = false;  // device_state_ holds the current state
  bool host_only_ = false;  // the executable keeps no state on a device
};

}  // namespace seqrt
