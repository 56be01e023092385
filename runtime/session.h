// A model ready to run on one backend: the graph is type-checked and
// compiled once, at creation; run() binds inputs by name.
//
//   SEQRT_ASSIGN_OR_RETURN(std::unique_ptr<Session> session,
//                          Session::load("model.seqrt", {}));
//   SEQRT_ASSIGN_OR_RETURN(auto outputs, session->run({{"tokens", tokens}}));
//   const Tensor& logits = outputs.at("logits");
//
// State pairs (DESIGN.md §4): an unfed state input starts from the pair's
// initial value, or zeros of the input's shape, so the first call of a
// stateful model needs no state tensors. Its symbolic dims take their size
// from the fed inputs or the dim bindings; one that neither determines is
// a length the state grows along (a concatenated KV cache's past length)
// and starts at 0. Feed the previous call's present_*
// outputs to carry state across calls.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "backends/backend.h"
#include "compiler/passes/fixed_capacity_kv_cache.h"
#include "graph/graph.h"
#include "graph/limits.h"
#include "graph/progress.h"
#include "graph/run_control.h"
#include "graph/status.h"
#include "runtime/backend_registry.h"
#include "runtime/memory_budget.h"

namespace seqrt {

struct SessionOptions {
  // A name of compiled_backends(); by default "cpu" (default_backend()).
  std::string backend = default_backend();
  // What the backend is opened with: device, fp16 weights, ...
  // (backends/backend_options.h; set_backend_option() checks a key at
  // once). A key the backend does not take fails create() naming it; its
  // environment variables, where set, override these.
  BackendOptions backend_options;
  // Run the graph passes (compiler/passes: folding, dead code, fusions into
  // the fused ops) before compiling; off runs the graph exactly as given.
  // A graph that these passes already optimised (a .seqrt file written by
  // `seqrt convert --optimize`, compiler/passes/pass.h is_optimized) is
  // not optimised again.
  bool optimize = true;
  CompileOptions compile;
  // Tensor sizes, node count, subgraph depth, the memory budget, Loop
  // iterations and the run timeout (graph/limits.h): create() and run()
  // fail naming the limit reached. The tensor limits and the budget hold
  // at every allocation of a run, shapes computed at run time included,
  // and for the weights a model file declares (load()).
  Limits limits;
  // Hears of each stage of create() (types, passes, compile).
  ProgressFn progress;
  // Tokens a Stream's KV cache holds; 0 (the default) lets the cache grow
  // by concatenation as the graph says. Above 0, create() also compiles
  // the graph's fixed-capacity form (compiler/passes/fixed_capacity_kv_
  // cache.h) and every Stream on the session runs it: each KV cache is
  // allocated once at this capacity and written in place, so a decode
  // step costs its new tokens, not a copy of the cache, and one memory
  // plan serves every step. A step past the capacity fails, the Stream
  // unchanged. run() keeps the graph's own semantics. create() fails,
  // saying why, when the graph has no KV cache of that form.
  int64_t kv_cache_capacity = 0;
};

// What one call of run() (or a Stream step) may change from the session's
// defaults.
struct SessionRunOptions {
  // Milliseconds this run may take before it fails with kDeadlineExceeded;
  // -1 takes the session's limits.run_timeout_ms, 0 sets no deadline.
  int64_t timeout_ms = -1;
};

// Sizes of the symbolic dims of `graph`'s inputs as `feeds` give them
// (inputs not fed, or fed with another rank, bind nothing).
std::map<std::string, int64_t> symbols_from_feeds(
    const Graph& graph, const std::map<std::string, Tensor>& feeds);

class Session {
 public:
  // Verifies and type-checks `graph`, creates the backend and compiles.
  static Result<std::unique_ptr<Session>> create(Graph graph,
                                                 SessionOptions options = {});
  // load_model() (runtime/model_loader.h), then create().
  static Result<std::unique_ptr<Session>> load(const std::string& path,
                                               SessionOptions options = {});

  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const Graph& graph() const { return graph_; }
  const SessionOptions& options() const { return options_; }
  const DeviceInfo& device_info() const { return backend_->device_info(); }
  // Kernel time per node of the compiled graph, summed over every run so
  // far; empty unless compiled with `options.compile.profile`.
  std::vector<NodeProfile> profile() const { return executable_->profile(); }
  // The backend's kernel-level plan (tilings, state places) for these
  // sizes of the symbolic dims (seqrt inspect --plan --backend NAME).
  Result<std::vector<KernelPlanEntry>> kernel_plan(
      const std::map<std::string, int64_t>& bindings) const {
    return executable_->kernel_plan(bindings);
  }
  // With a backend list: the segments and the bytes crossing per run
  // (Executable::placement_report); empty on one backend.
  std::string placement_report(
      const std::map<std::string, int64_t>& bindings) const {
    return executable_->placement_report(bindings);
  }

  // Runs the compiled graph. `feeds` maps graph input names to tensors;
  // returns every graph output by name. Unknown feed names and unfed
  // inputs (other than state inputs) are errors naming them. Safe to call
  // from several threads at once. Fed tensors are never written, except
  // one moved in as the only handle to its storage, which the run may
  // update in place when it replaces it (a KV cache). Running out of host
  // memory is a kOutOfMemory error; a run above the memory budget fails
  // before it allocates. A run past its deadline or cancelled fails with
  // kDeadlineExceeded or kCancelled at the next check (between nodes and
  // between Loop/Scan iterations); the session is unchanged and usable.
  Result<std::map<std::string, Tensor>> run(
      std::map<std::string, Tensor> feeds,
      const SessionRunOptions& run_options = {}) const;

  // Stops every run in flight on this session, run() and Stream steps, at
  // its next check with kCancelled ("run cancelled after ..."); runs that
  // start after the call are not affected. Thread-safe: meant to be called
  // from another thread than the ones running.
  void cancel() const {
    cancel_generation_.fetch_add(1, std::memory_order_acq_rel);
  }

 private:
  friend class Stream;  // validates before handing its state over

  // Sets `control` up for one run: the limits, the deadline of
  // `run_options` (or the session's) and this session's cancel().
  void prepare_run(RunControl& control,
                   const SessionRunOptions& run_options) const;
  // The graph's inputs in order from `feeds` (state inputs not fed start
  // from their initial value), checked against the declared types. Gives
  // `control` the memory plan's estimate of the run.
  Result<std::vector<Tensor>> bind_inputs(std::map<std::string, Tensor> feeds,
                                          RunControl& control) const;
  // Runs on inputs from bind_inputs, with the run's control installed on
  // this thread; returns the outputs by name.
  Result<std::map<std::string, Tensor>> run_bound(
      std::vector<Tensor> inputs) const;
  // run_bound() past the budget check: the executable's run.
  Result<std::map<std::string, Tensor>> run_checked(
      std::vector<Tensor> inputs) const;

  Session(Graph graph, SessionOptions options, std::unique_ptr<Backend> backend,
          std::unique_ptr<Executable> executable);

  // Compiles the fixed-capacity KV cache form (options_.kv_cache_capacity).
  Status create_kv_cache_session();

  Status check_feed_names(const std::map<std::string, Tensor>& feeds) const;
  // Sizes of symbolic dims: the compile bindings, then the fed inputs.
  std::map<std::string, int64_t> bind_symbols(
      const std::map<std::string, Tensor>& feeds) const;
  // The tensor for an unfed state input: its initial value or zeros.
  Result<Tensor> initial_state(
      const StatePair& pair,
      const std::map<std::string, int64_t>& symbols) const;

  Graph graph_;
  SessionOptions options_;
  // With options_.kv_cache_capacity: the fixed-capacity form the Streams
  // run (its `graph` moved into the session) and what it changed.
  std::unique_ptr<Session> kv_cache_session_;
  KvCacheRewrite kv_cache_;
  // Declared before the executable so that it outlives it.
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<Executable> executable_;
  // Checks runs against options_.limits.memory_budget_bytes; reads graph_.
  std::unique_ptr<MemoryBudget> budget_;
  // Bumped by cancel(); each run stops when it differs from its start.
  mutable std::atomic<uint64_t> cancel_generation_{0};
};

}  // namespace seqrt
