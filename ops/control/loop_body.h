// Runs a Loop or Scan body once per iteration. Where the executor can
// prepare bodies (KernelContext::prepare_subgraph, the CPU backend), the
// body is prepared once: schedule, schemas and kernels fixed, and every
// node output written into buffers kept across iterations (two per value,
// so a value carried into the next iteration is never overwritten while
// that iteration reads it). Where the executor also keeps node state
// (KernelContext::node_state), the prepared body and its buffers outlive
// the node's run and serve its next run, unless that run's inputs have
// other dims (then the body is prepared again); a buffer that something
// outside still holds (the node's last outputs) is never reused. The
// caller may also offer storage for a body output (a step of a stacked
// scan output), which the kernel that computes it then writes into
// directly. Elsewhere (the reference backend) each iteration runs the body
// through run_body.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "ops/op_context.h"

namespace seqrt {

class LoopBody {
 public:
  // `ctx` and `body` must outlive this object; `attr` names the body in
  // errors.
  LoopBody(const KernelContext& ctx, std::string attr, const Graph& body);
  // Gives the prepared body back to the node's state, for its next run.
  ~LoopBody();
  LoopBody(const LoopBody&) = delete;
  LoopBody& operator=(const LoopBody&) = delete;

  // Prepares the body when the executor offers it (or takes the one the
  // node's last run left, when made for inputs of these dims); otherwise
  // a no-op.
  Status prepare();
  bool prepared() const { return state_ != nullptr; }
  // Whether prepare() reused the body of an earlier run of the node.
  bool reused() const { return reused_; }

  // Storage for body output `index` in the next run only: used when the
  // node computing it allocates that dtype and dims (the buffer is zeroed
  // first). A body output that is a body input or a view is not placed;
  // callers compare data pointers to know.
  void offer_output(size_t index, Tensor slot);

  // One iteration: the body's outputs, checked to be as many as declared.
  // Outputs may live in this object's buffers: they stay intact through
  // the next run when passed back to it as inputs; anything else kept
  // beyond the next run must go through keep().
  Result<std::vector<Tensor>> run(std::vector<Tensor> inputs);

  // `tensor`, copied when it lives in a buffer the next run may reuse.
  Tensor keep(const Tensor& tensor) const;

 private:
  // The prepared body, its buffers, and the node's input dims it was
  // prepared for (kept in the node's NodeStateCache between runs).
  struct State;

  Tensor place(ValueId value, DType dtype, const std::vector<int64_t>& dims);
  bool read_by_this_run(const Tensor& buffer) const;
  std::unique_ptr<State> take_kept_state() const;

  const KernelContext& ctx_;
  std::string attr_;
  const Graph& body_;
  std::unique_ptr<State> state_;  // once prepared
  bool reused_ = false;
  ValuePlacer placer_;
  std::vector<Tensor> offered_;          // by body output, for the next run
  std::vector<const void*> input_data_;  // of the run going on
};

}  // namespace seqrt
