// Helpers shared by the control-flow ops (If, Scan, Loop): reading the
// declared types of a subgraph, running it through the executor's runner,
// and cutting and stacking tensors along an axis.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/run_control.h"
#include "ops/op_context.h"

namespace seqrt {

// The graph attribute `attr`, checked to take `num_inputs` inputs and give
// `num_outputs` outputs (an error names the node and the attribute).
Result<const Graph*> subgraph_attr(const OpContext& ctx,
                                   const std::string& attr, size_t num_inputs,
                                   size_t num_outputs);

// The declared type of output `i` of `body`; an error when its dtype is
// unknown (infer_graph types subgraphs before the node that holds them).
Result<ValueInfo> subgraph_output_type(const OpContext& ctx,
                                       const std::string& attr,
                                       const Graph& body, size_t i);

// Gives body input `i` this dtype and shape where the body left them out
// (ONNX Loop and Scan bodies may); a checked count: `i` must exist.
void declare_body_input(Graph& body, size_t i, DType dtype,
                        const std::optional<Shape>& shape);

// Both sides' dtypes must be equal; `what` names the pair in the error.
Status check_same_type(const OpContext& ctx, const std::string& what,
                       DType expected, DType got);

// Dims equal on both sides are kept, others become unknown; nullopt when
// either rank is unknown. Different ranks give nullopt where the op allows
// them (If branches, Loop-carried values) and an error otherwise.
enum class RankRule { kMustMatch, kMayDiffer };
Result<std::optional<Shape>> merge_shapes(const OpContext& ctx,
                                          const std::string& what,
                                          const std::optional<Shape>& a,
                                          const std::optional<Shape>& b,
                                          RankRule rule);

// `shape` with `dim` inserted before position `axis` (nullopt stays).
std::optional<Shape> insert_dim(const std::optional<Shape>& shape, int64_t axis,
                                Dim dim);

// Runs `body` with the executor's runner; a kernel called without one (a
// bare KernelContext) gets an internal error rather than a crash. Checks
// the body gave as many outputs as it declares.
Result<std::vector<Tensor>> run_body(const KernelContext& ctx,
                                     const std::string& attr, const Graph& body,
                                     const std::vector<Tensor>& inputs);

// `outputs` of one run of `body` as run_body() returns them: a stopped
// run's error names the node, others get the node and body as context,
// and the output count is checked.
Result<std::vector<Tensor>> finish_body_run(
    const KernelContext& ctx, const std::string& attr, const Graph& body,
    Result<std::vector<Tensor>> outputs);

// Between two iterations of a Loop or Scan: ok, or the run's cancel or
// deadline error naming the node and the iteration about to start.
Status check_iteration(const OpContext& ctx, int64_t iteration);

// Element `index` of `x` along `axis`, that axis removed (a copy).
Result<Tensor> slice_along(const Tensor& x, int64_t axis, int64_t index);

// Element `index` of `x` along `axis`, that axis removed: a view into `x`
// where the element is contiguous (no dim before `axis` above 1), else a
// copy.
Result<Tensor> slice_or_view(const Tensor& x, int64_t axis, int64_t index);

// Stores `slice` as element `index` of `out` along `axis`; `slice` must
// have `out`'s dims without `axis` and its dtype (checked by callers).
void store_slice(Tensor& out, int64_t axis, int64_t index, const Tensor& slice);

// Collects per-step scan outputs that must all have one dtype and shape,
// then stacks them along `axis`; `reverse` stores step t at length-1-t.
// Each step is checked against the run's limits (graph/run_control.h) as
// it comes: the stack so far as one tensor against the tensor limits, and
// the steps held against the memory budget.
class ScanOutputStack {
 public:
  ScanOutputStack(std::string what, int64_t axis, bool reverse)
      : what_(std::move(what)), axis_(axis), reverse_(reverse) {}

  Status add(const OpContext& ctx, Tensor step);
  // The stacked tensor of `length` steps (all added); with no steps the
  // type comes from the body's `declared` output, which must then have a
  // dtype and a rank (dims not fixed there become 0).
  Result<Tensor> stack(const OpContext& ctx, int64_t length,
                       const Value& declared) const;

 private:
  std::string what_;
  int64_t axis_;
  bool reverse_;
  std::vector<Tensor> steps_;
  std::vector<HeldBytes> held_;  // the steps' bytes, under a budget
};

}  // namespace seqrt
