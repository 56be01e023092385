// Runs a Loop or Scan body once per iteration. Where the executor can
// prepare bodies (KernelContext::prepare_subgraph, the CPU backend), the
// body is prepared once per node run: schedule, schemas and kernels fixed,
// and every node output written into buffers kept across iterations (two
// per value, so a value carried into the next iteration is never
// overwritten while that iteration reads it). The caller may also offer
// storage for a body output (a step of a stacked scan output), which the
// kernel that computes it then writes into directly. Elsewhere (the
// reference backend) each iteration runs the body through run_body.
#pragma once

#include <array>
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
  LoopBody(const KernelContext& ctx, std::string attr, const Graph& body)
      : ctx_(ctx), attr_(std::move(attr)), body_(body) {}
  LoopBody(const LoopBody&) = delete;
  LoopBody& operator=(const LoopBody&) = delete;

  // Prepares the body when the executor offers it; otherwise a no-op.
  Status prepare();
  bool prepared() const { return prepared_ != nullptr; }

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
  using Buffers = std::array<std::shared_ptr<Tensor>, 2>;
  Tensor place(ValueId value, DType dtype, const std::vector<int64_t>& dims);
  bool read_by_this_run(const Tensor& buffer) const;

  const KernelContext& ctx_;
  std::string attr_;
  const Graph& body_;
  std::unique_ptr<PreparedSubgraph> prepared_;
  ValuePlacer placer_;
  std::vector<int> output_index_;        // by value id: body output, or -1
  std::vector<Tensor> offered_;          // by body output, for the next run
  std::vector<Buffers> buffers_;         // by value id, made on first use
  std::vector<const void*> input_data_;  // of the run going on
};

}  // namespace seqrt
