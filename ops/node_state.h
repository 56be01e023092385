// What a kernel keeps between runs of one node: a Loop or Scan body made
// ready to run (ops/control/loop_body.h), with its buffers. The executor
// owns one NodeStateCache per node that holds subgraphs, for as long as
// the compiled graph (or the prepared body holding the node) lives, and
// hands it to the kernel (KernelContext::node_state); other executors hand
// none, and kernels then keep nothing.
//
// Runs of one node may overlap (an executable runs from several threads at
// once): each run takes a state for itself and gives it back when done, so
// no state is ever used by two runs at the same time; a run that finds none
// idle makes its own.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

namespace seqrt {

class NodeState {
 public:
  virtual ~NodeState() = default;
};

class NodeStateCache {
 public:
  // Idle states kept beyond this many are dropped: one per run in flight
  // at once is all that is ever reused.
  static constexpr size_t kMaxIdle = 4;

  // An idle state, now the caller's alone, or null when none is idle.
  std::unique_ptr<NodeState> take();
  // Makes `state` idle again for a later run (null: nothing).
  void give_back(std::unique_ptr<NodeState> state);
  size_t idle_count() const;

 private:
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<NodeState>> idle_;
};

}  // namespace seqrt
