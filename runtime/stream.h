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
// A step that fails — bad feeds, a limit reached, cancelled by the
// Session's cancel() or past its deadline — leaves the state as it was
// before the call, so the Stream goes on from there: on a host backend the
// Stream keeps its handle to the state during the step, and a kernel that
// replaces a state writes a new tensor.
//
// set_update_state_in_place(true) trades that for speed on a host backend:
// the Stream hands its state to each step as the only handle to it, so a
// fixed-capacity KV cache written by TensorScatter costs the new rows, not
// a copy of the cache; a step that then fails resets the Stream (its error
// says so). Holding a snapshot() keeps the state intact either way (the
// step then copies it).
//
// On a session with SessionOptions::kv_cache_capacity, the Stream runs the
// graph's fixed-capacity KV cache form (runtime/kv_cache_stream.h): each
// cache is allocated once and written in place, so a step costs its new
// tokens; the feeds, outputs, snapshot() and restore() keep the graph's own
// form. Such a Stream always updates its caches in place.
//
// On a backend that keeps state on its device
// (Executable::keeps_state_on_device, e.g. Vulkan) the first run copies the
// state there once and later runs leave it there: a step moves only its other
// inputs and outputs. snapshot() then reads the state back and restore() writes
// it at the next run, so both cost a copy of the state.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "runtime/session.h"

namespace seqrt {

class KvCacheStream;

class Stream {
 public:
  // Borrows `session`, which must outlive the Stream.
  explicit Stream(const Session& session);
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  // Runs with `feeds` plus the held state; the present_* outputs become the
  // state for the next run, and every other output is returned. A state
  // input fed explicitly replaces the held state for this run. A failed
  // step leaves the state unchanged, except with set_update_state_in_place
  // or on a device backend whose run failed after it started (the device
  // lost): then the Stream is reset and its error says so. `run_options`
  // as Session::run; Session::cancel() stops the step too.
  Result<std::map<std::string, Tensor>> run(
      const std::map<std::string, Tensor>& feeds,
      const SessionRunOptions& run_options = {});

  // See the top of this file; off by default.
  void set_update_state_in_place(bool in_place) { in_place_ = in_place; }

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
  void reset();

 private:
  // The graph's inputs from bind_inputs: the state goes to the device if
  // the executable keeps it there, else the run is today's host run.
  Result<std::map<std::string, Tensor>> run_bound(std::vector<Tensor> inputs);
  // run() with the step's control installed.
  Result<std::map<std::string, Tensor>> run_controlled(
      const std::map<std::string, Tensor>& feeds, RunControl& control);
  // A run with the state already on the device.
  Result<std::map<std::string, Tensor>> step_on_device(
      const std::map<std::string, Tensor>& feeds, RunControl& control);
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
  bool in_place_ = false;   // set_update_state_in_place
  // Set on a session with kv_cache_capacity: every call goes there.
  std::unique_ptr<KvCacheStream> kv_cache_;
};

}  // namespace seqrt
