// Loop (opset 21 semantics): inputs M (optional i64 trip count), cond
// (optional bool) and N loop-carried values. The body takes (iteration
// number, cond, N carried values) and gives (cond, N carried values, K scan
// outputs); the loop runs while i < M and cond holds. Outputs: the N final
// carried values, then the K scan outputs stacked along a new first axis.
//
// The body's cond output ends the loop even when the node's cond input is
// omitted, as in ONNX Runtime: that is how a loop with neither M nor cond
// can end at all.
#include "ops/control/loop_body.h"
#include "ops/control/subgraph.h"
#include "ops/registry.h"

namespace seqrt {
namespace {

Status check_one_element(const OpContext& ctx, const std::string& what,
                         DType expected, DType dtype,
                         const std::optional<Shape>& shape) {
  SEQRT_RETURN_IF_ERROR(check_same_type(ctx, what, expected, dtype));
  if (!shape.has_value() || !shape->is_fixed()) return Status::ok();
  int64_t count = 1;
  for (int64_t d : shape->fixed_dims()) count *= d;
  if (count != 1) {
    return ctx.error("{} must hold one element, got shape {}", what,
                     shape->to_string());
  }
  return Status::ok();
}

// Body inputs are (iteration_num, cond, carried...); outputs are (cond,
// carried..., scan outputs...). Checks the counts and the declared dtypes
// against the node's carried inputs.
Result<const Graph*> loop_body(const OpContext& ctx,
                               const std::vector<DType>& carried) {
  size_t n = carried.size();
  if (ctx.node().outputs.size() < n) {
    return ctx.error("has {} loop-carried inputs but only {} outputs", n,
                     ctx.node().outputs.size());
  }
  size_t k = ctx.node().outputs.size() - n;
  SEQRT_ASSIGN_OR_RETURN(const Graph* body,
                         subgraph_attr(ctx, "body", 2 + n, 1 + n + k));
  const Value& iteration = body->value(body->inputs[0]);
  const Value& cond = body->value(body->inputs[1]);
  SEQRT_RETURN_IF_ERROR(check_same_type(
      ctx,
      fmt::format("body input 0 ('{}', the iteration number)", iteration.name),
      DType::kI64, iteration.dtype));
  SEQRT_RETURN_IF_ERROR(check_same_type(
      ctx, fmt::format("body input 1 ('{}', the condition)", cond.name),
      DType::kBool, cond.dtype));
  for (size_t i = 0; i < n; ++i) {
    const Value& input = body->value(body->inputs[2 + i]);
    SEQRT_RETURN_IF_ERROR(check_same_type(
        ctx,
        fmt::format("loop-carried value {} (input {}, body input '{}')", i,
                    2 + i, input.name),
        input.dtype, carried[i]));
  }
  return body;
}

// Body inputs the body leaves untyped: the iteration number (int64 scalar),
// the condition (bool scalar), and each loop-carried value's dtype (its
// shape may change between iterations, so it stays unknown).
Status type_loop_body(const InferContext& ctx, const std::string& attr,
                      Graph& body) {
  size_t num_carried = ctx.num_inputs() < 2 ? 0 : ctx.num_inputs() - 2;
  if (body.inputs.size() != 2 + num_carried) {
    return ctx.error("'{}' must take {} inputs, it takes {}", attr,
                     2 + num_carried, body.inputs.size());
  }
  declare_body_input(body, 0, DType::kI64, Shape());
  declare_body_input(body, 1, DType::kBool, Shape());
  for (size_t i = 0; i < num_carried; ++i) {
    declare_body_input(body, 2 + i, ctx.input_dtype(2 + i), std::nullopt);
  }
  return Status::ok();
}

Status infer_loop(InferContext& ctx) {
  if (ctx.has_input(0)) {
    SEQRT_RETURN_IF_ERROR(check_one_element(
        ctx, "input 'M'", DType::kI64, ctx.input_dtype(0), ctx.input_shape(0)));
  }
  if (ctx.has_input(1)) {
    SEQRT_RETURN_IF_ERROR(check_one_element(ctx, "input 'cond'", DType::kBool,
                                            ctx.input_dtype(1),
                                            ctx.input_shape(1)));
  }
  std::vector<DType> carried;
  for (size_t i = 2; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) return ctx.error("input {} is missing", i);
    carried.push_back(ctx.input_dtype(i));
  }
  size_t n = carried.size();
  SEQRT_ASSIGN_OR_RETURN(const Graph* body, loop_body(ctx, carried));
  SEQRT_ASSIGN_OR_RETURN(ValueInfo cond_out,
                         subgraph_output_type(ctx, "body", *body, 0));
  SEQRT_RETURN_IF_ERROR(check_one_element(ctx, "body output 0 (the condition)",
                                          DType::kBool, cond_out.dtype,
                                          cond_out.shape));
  for (size_t i = 0; i < n; ++i) {
    SEQRT_ASSIGN_OR_RETURN(ValueInfo out,
                           subgraph_output_type(ctx, "body", *body, 1 + i));
    SEQRT_RETURN_IF_ERROR(check_same_type(
        ctx, fmt::format("body output {} (loop-carried value {})", 1 + i, i),
        carried[i], out.dtype));
    // A carried value may change shape between iterations.
    SEQRT_ASSIGN_OR_RETURN(
        std::optional<Shape> shape,
        merge_shapes(ctx,
                     fmt::format("loop-carried value {} and its update", i),
                     ctx.input_shape(2 + i), out.shape, RankRule::kMayDiffer));
    ctx.set_output(i, out.dtype, std::move(shape));
  }
  for (size_t k = 0; n + k < ctx.num_outputs(); ++k) {
    SEQRT_ASSIGN_OR_RETURN(ValueInfo out,
                           subgraph_output_type(ctx, "body", *body, 1 + n + k));
    ctx.set_output(n + k, out.dtype, insert_dim(out.shape, 0, Dim::unknown()));
  }
  return Status::ok();
}

// The trip count (-1: none) and initial condition of a Loop node.
struct LoopBounds {
  int64_t max_trips = -1;
  bool cond = true;
};

Result<LoopBounds> loop_bounds(const KernelContext& ctx) {
  LoopBounds bounds;
  if (const Tensor* m = ctx.input(0)) {
    SEQRT_RETURN_IF_ERROR(check_one_element(ctx, "input 'M'", DType::kI64,
                                            m->dtype(), m->shape()));
    bounds.max_trips = m->element_i64(0);
    if (bounds.max_trips < 0) {
      return ctx.error("input 'M' must be >= 0, got {}", bounds.max_trips);
    }
  }
  if (const Tensor* cond = ctx.input(1)) {
    SEQRT_RETURN_IF_ERROR(check_one_element(ctx, "input 'cond'", DType::kBool,
                                            cond->dtype(), cond->shape()));
    bounds.cond = cond->element_i64(0) != 0;
  }
  return bounds;
}

// Reads the body's condition output, which must be one bool.
Result<bool> body_cond(const KernelContext& ctx, const Tensor& cond) {
  SEQRT_RETURN_IF_ERROR(check_one_element(ctx, "body output 0 (the condition)",
                                          DType::kBool, cond.dtype(),
                                          cond.shape()));
  return cond.element_i64(0) != 0;
}

Status run_loop(KernelContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(LoopBounds bounds, loop_bounds(ctx));
  std::vector<DType> carried_dtypes;
  std::vector<Tensor> carried;
  for (size_t i = 2; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) return ctx.error("input {} is missing", i);
    carried_dtypes.push_back(ctx.input(i)->dtype());
    carried.push_back(*ctx.input(i));
  }
  size_t n = carried.size();
  SEQRT_ASSIGN_OR_RETURN(const Graph* body, loop_body(ctx, carried_dtypes));
  std::vector<ScanOutputStack> stacks;
  for (size_t k = 0; n + k < ctx.num_outputs(); ++k) {
    stacks.emplace_back(fmt::format("scan output {}", k), 0, false);
  }
  // ONNX allows a loop with neither M nor cond that only a body cond of
  // false ends, and M may come from an input: both are bounded by
  // max_loop_iterations (graph/limits.h), a run's deadline and cancel.
  const RunControl* control = RunControl::current();
  const int64_t max_iterations = control != nullptr
                                     ? control->limits().max_loop_iterations
                                     : Limits().max_loop_iterations;
  // Exporters write while-loops with a trip count of INT64_MAX and a
  // condition, so a large count alone is no error: the iteration past the
  // limit is.
  int64_t trips = 0;
  bool cond = bounds.cond;
  // Prepared once for all iterations where the executor can.
  LoopBody runner(ctx, "body", *body);
  SEQRT_RETURN_IF_ERROR(runner.prepare());
  std::vector<Tensor> body_inputs;
  while (cond && (bounds.max_trips < 0 || trips < bounds.max_trips)) {
    if (trips == max_iterations) {
      return limit_error(
          LimitKind::kMaxLoopIterations,
          fmt::format("{} ({})", ctx.node().label(),
                      bounds.max_trips < 0
                          ? std::string("no trip count")
                          : fmt::format("trip count {}", bounds.max_trips)),
          trips + 1, max_iterations);
    }
    SEQRT_RETURN_IF_ERROR(check_iteration(ctx, trips));
    // The carried values move in: one iteration's outputs are the next
    // one's inputs, never copied.
    body_inputs.clear();
    body_inputs.push_back(Tensor::scalar<int64_t>(trips));
    body_inputs.push_back(Tensor::scalar<bool>(cond));
    for (Tensor& value : carried) body_inputs.push_back(std::move(value));
    SEQRT_ASSIGN_OR_RETURN(std::vector<Tensor> outputs,
                           runner.run(std::move(body_inputs)));
    SEQRT_ASSIGN_OR_RETURN(cond, body_cond(ctx, outputs[0]));
    for (size_t i = 0; i < n; ++i) {
      if (outputs[1 + i].dtype() != carried_dtypes[i]) {  // message only then
        return check_same_type(
            ctx,
            fmt::format("body output {} (loop-carried value {})", 1 + i, i),
            carried_dtypes[i], outputs[1 + i].dtype());
      }
      carried[i] = std::move(outputs[1 + i]);
    }
    for (size_t k = 0; k < stacks.size(); ++k) {
      // Steps are held to the end, out of the buffers later runs reuse.
      SEQRT_RETURN_IF_ERROR(
          stacks[k].add(ctx, runner.keep(outputs[1 + n + k])));
    }
    ++trips;
  }
  for (size_t i = 0; i < n; ++i) ctx.set_output(i, carried[i]);
  for (size_t k = 0; k < stacks.size(); ++k) {
    SEQRT_ASSIGN_OR_RETURN(
        Tensor stacked,
        stacks[k].stack(ctx, trips, body->value(body->outputs[1 + n + k])));
    ctx.set_output(n + k, std::move(stacked));
  }
  return Status::ok();
}

}  // namespace

void register_loop(OpRegistry& registry) {
  OpSchema s;
  s.name = "Loop";
  s.doc = "runs a body while a trip count and a condition allow";
  s.inputs = {{"M", true}, {"cond", true}, {"v_initial", true, true}};
  s.outputs = {{"v_final_and_scan_outputs", false, true}};
  s.attrs = {AttrSpec{"body", AttrType::kGraph, std::nullopt, true, {}}};
  s.infer = infer_loop;
  s.type_body_inputs = type_loop_body;
  s.reference = run_loop;
  register_or_die(registry, std::move(s));
}

}  // namespace seqrt
