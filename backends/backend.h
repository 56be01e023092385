// The one interface between the runtime and a backend (DESIGN.md §6).
// Nothing else crosses it: a backend never includes another backend, and
// ops/ and importers/ know nothing of backends.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backends/backend_options.h"
#include "backends/node_profiler.h"
#include "compiler/lower/lower.h"
#include "graph/graph.h"

namespace seqrt {

struct DeviceInfo {
  std::string backend;  // "reference", "cpu", "vulkan", "cuda"
  std::string name;     // the device, e.g. "host CPU", "NVIDIA H100"
  bool is_host_memory = true;
  uint64_t memory_bytes = 0;         // 0: unknown / host memory
  uint64_t max_buffer_bytes = 0;     // 0: no limit beyond memory
  uint32_t shared_memory_bytes = 0;  // per workgroup/block; 0 on CPUs
  uint32_t max_workgroup_invocations = 0;
  uint32_t subgroup_size = 0;
};

struct CompileOptions {
  // Values for symbolic dims ("batch" -> 1, "seq" -> 128); unbound symbols
  // are taken from the inputs at run time where the backend allows it.
  std::map<std::string, int64_t> dim_bindings;
  int num_threads = 0;  // 0: the backend's default
  // Place intermediate tensors by the graph-level memory plan (one arena
  // per run) where the backend supports it; off allocates each one.
  bool use_memory_plan = true;
  // Time every node's kernel on each run (a little overhead per node);
  // Executable::profile() reads the totals.
  bool profile = false;
};

// The kernel-level plan of one node (DESIGN.md §5.2): how the backend tiles
// it and where its running state lives, for `seqrt inspect --plan`.
struct KernelPlanEntry {
  std::string node;  // the node's name
  std::string op;
  std::string tiling;         // e.g. "64 channels x 16 states per workgroup"
  std::string state_place;    // "registers", "shared memory" or "" (no state)
  uint64_t shared_bytes = 0;  // on-chip memory per workgroup/block
  uint64_t shared_limit = 0;  // the limit the tiling was chosen under
};

// The state of one Stream held where an executable runs (DESIGN.md §4),
// made by Executable::create_state and used only with that executable.
// Opaque to the runtime except for the dims it holds now.
class ExecutableState {
 public:
  virtual ~ExecutableState() = default;
  // The dims of each state, in graph.state_pairs order, so that a caller
  // can check its next inputs (a symbol shared with a state) without
  // reading the state back.
  virtual std::vector<std::vector<int64_t>> dims() const = 0;
};

// A graph compiled for one backend. Immutable once built: run() may be
// called from several threads at once.
//
// Device-resident state is a declared capability: an executable whose
// memory is not the host's (Vulkan) answers keeps_state_on_device() with
// true and implements create_state() and the three calls after it, so a
// Stream's state pairs stay on the device and a step moves only its other
// inputs and outputs. The others answer false and a Stream feeds its state
// to run() as host tensors, which on host backends is already free (the
// state is moved in and updated in place); their state calls are never
// made and say kUnsupported.
class Executable {
 public:
  virtual ~Executable() = default;
  // `inputs` follow the graph's inputs in order; returns the graph's
  // outputs in order. Inputs are checked against the declared types. An
  // input moved in as the only handle to its storage may be updated in
  // place (a state the run replaces, such as a fixed-capacity KV cache);
  // inputs the caller still holds are never written.
  virtual Result<std::vector<Tensor>> run(std::vector<Tensor> inputs) const = 0;

  // Whether a Stream's state lives on the device between runs (the four
  // calls below); false: the caller keeps it and uses run().
  virtual bool keeps_state_on_device() const { return false; }
  // A state on the device holding `state`, one tensor per graph.state_pairs
  // entry in that order (typed as the pairs' inputs). Only called where
  // keeps_state_on_device().
  virtual Result<std::unique_ptr<ExecutableState>> create_state(
      const std::vector<Tensor>& /*state*/) const {
    return unsupported("this backend keeps no state on its device");
  }
  // run() with each state pair's input read from `state` and its output
  // left there as the next state. `inputs` are the graph's inputs in order
  // without the state inputs; returns the graph's outputs in order without
  // the state outputs. The caller checks `inputs` (types, and symbols
  // shared with state.dims()); any error here may leave `state` partly
  // updated, so the caller must write it again before the next run. Runs
  // on different states may come from several threads at once.
  virtual Result<std::vector<Tensor>> run_with_state(
      std::vector<Tensor> /*inputs*/, ExecutableState& /*state*/) const {
    return unsupported("this backend keeps no state on its device");
  }
  // Copies of the held state, in graph.state_pairs order.
  virtual Result<std::vector<Tensor>> read_state(
      const ExecutableState& /*state*/) const {
    return unsupported("this backend keeps no state on its device");
  }
  // Replaces the held state (as create_state; dims may differ from now).
  virtual Status write_state(ExecutableState& /*state*/,
                             const std::vector<Tensor>& /*tensors*/) const {
    return unsupported("this backend keeps no state on its device");
  }
  // Kernel time per node summed over every run so far, in graph order;
  // empty unless compiled with CompileOptions::profile.
  virtual std::vector<NodeProfile> profile() const { return {}; }
  // The kernel-level plan of the nodes that have one, for these sizes of
  // the symbolic dims; kUnsupported on a backend that plans no kernels.
  virtual Result<std::vector<KernelPlanEntry>> kernel_plan(
      const std::map<std::string, int64_t>& /*bindings*/) const {
    return unsupported("this backend has no kernel-level plan to show");
  }
  // Where the graph runs when it is split between backends (a backend
  // list): the segments, why nodes left the first backend and the bytes
  // crossing per run at these sizes; empty on one backend.
  virtual std::string placement_report(
      const std::map<std::string, int64_t>& /*bindings*/) const {
    return "";
  }
};

// A device opened with BackendOptions (backend_options.h) by the factory
// each backend exports; runtime/backend_registry.h creates them by name.
// Tensors cross to and from the device only inside Executable::run and the
// state calls: the runtime holds no device memory of its own, so the
// interface has no buffer or copy calls (each backend keeps its allocator
// and transfers private: Vulkan's memory.h, CUDA's device_memory.h).
//
// A backend declares what it needs written out (lowering_needs) and which
// nodes its kernels take (kernel_supports); the compiler does the rest in
// one place for every backend (compiler/lower/lower.h): compile() verifies,
// lowers and admits the graph, then hands it to compile_lowered().
class Backend {
 public:
  virtual ~Backend() = default;

  virtual const DeviceInfo& device_info() const = 0;
  // The rewrites the compiler runs before this backend's kernels see a
  // graph; none by default.
  virtual LoweringNeeds lowering_needs() const { return {}; }
  // Ok when one of the backend's kernels takes `node` as it stands in
  // `graph` (with its attributes and input types); otherwise kUnsupported
  // with the reason.
  virtual Status kernel_supports(const Graph& graph,
                                 const Node& node) const = 0;

  // The inputs of `node` (by index) the backend reads on the host before
  // it runs the node: parameters it records its command buffers for
  // (Vulkan: a Reshape's shape, a Slice's starts...). It takes such an
  // input when it is a graph input, not when the graph computes it from
  // data on the device, so a backend list (compiler/partition) runs the
  // nodes that compute it on a host backend and feeds it as a segment
  // input. None by default (host backends, CUDA).
  virtual std::vector<size_t> host_inputs(const Graph& /*graph*/,
                                          const Node& /*node*/) const {
    return {};
  }

  // Ok when the backend can run `node`: as it stands or as lowering writes
  // it out, and, where the backend runs subgraphs as they are, every node
  // inside them too.
  Status supports(const Graph& graph, const Node& node) const;
  // Compiles a verified, type-inferred graph: lowers it, fails listing
  // every node it cannot run, then compile_lowered(). A backend list
  // (runtime/multi_backend.h) partitions instead.
  virtual Result<std::unique_ptr<Executable>> compile(
      const Graph& graph, const CompileOptions& options);

 protected:
  // The graph as lowering_needs() asked, every node of it supported.
  virtual Result<std::unique_ptr<Executable>> compile_lowered(
      const Graph& graph, const CompileOptions& options) = 0;
  // "the CPU backend", for errors.
  std::string display_name() const;
};

}  // namespace seqrt
