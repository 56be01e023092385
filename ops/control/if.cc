// If (opset 21 semantics): runs `then_branch` or `else_branch` (graphs
// with no inputs, reading enclosing values through captures) depending on
// a one-element bool `cond`; the outputs are the chosen branch's outputs.
#include "ops/control/subgraph.h"
#include "ops/registry.h"

namespace seqrt {
namespace {

Status check_cond_type(const OpContext& ctx, DType dtype,
                       const std::optional<Shape>& shape) {
  SEQRT_RETURN_IF_ERROR(
      check_same_type(ctx, "input 'cond'", DType::kBool, dtype));
  if (shape.has_value() && shape->is_fixed()) {
    int64_t count = 1;
    for (int64_t d : shape->fixed_dims()) count *= d;
    if (count != 1) {
      return ctx.error("input 'cond' must hold one element, got shape {}",
                       shape->to_string());
    }
  }
  return Status::ok();
}

// The output types when the branch is not known: dtypes and ranks must
// agree, dims that differ become unknown.
Status infer_merged(InferContext& ctx, const Graph& then_branch,
                    const Graph& else_branch) {
  for (size_t i = 0; i < ctx.num_outputs(); ++i) {
    SEQRT_ASSIGN_OR_RETURN(
        ValueInfo then_type,
        subgraph_output_type(ctx, "then_branch", then_branch, i));
    SEQRT_ASSIGN_OR_RETURN(
        ValueInfo else_type,
        subgraph_output_type(ctx, "else_branch", else_branch, i));
    std::string what = fmt::format("output {} of the branches", i);
    if (then_type.dtype != else_type.dtype) {
      return ctx.error(
          "{} differ in dtype: then_branch gives {}, "
          "else_branch gives {}",
          what, dtype_name(then_type.dtype), dtype_name(else_type.dtype));
    }
    SEQRT_ASSIGN_OR_RETURN(std::optional<Shape> shape,
                           merge_shapes(ctx, what, then_type.shape,
                                        else_type.shape, RankRule::kMayDiffer));
    ctx.set_output(i, then_type.dtype, std::move(shape));
  }
  return Status::ok();
}

Status infer_if(InferContext& ctx) {
  SEQRT_RETURN_IF_ERROR(
      check_cond_type(ctx, ctx.input_dtype(0), ctx.input_shape(0)));
  size_t n = ctx.num_outputs();
  SEQRT_ASSIGN_OR_RETURN(const Graph* then_branch,
                         subgraph_attr(ctx, "then_branch", 0, n));
  SEQRT_ASSIGN_OR_RETURN(const Graph* else_branch,
                         subgraph_attr(ctx, "else_branch", 0, n));
  const Tensor* cond = ctx.input_value(0);
  if (cond == nullptr || cond->num_elements() != 1) {
    return infer_merged(ctx, *then_branch, *else_branch);
  }
  // A known cond: only the taken branch's types matter.
  bool taken = cond->element_i64(0) != 0;
  const char* attr = taken ? "then_branch" : "else_branch";
  const Graph& branch = taken ? *then_branch : *else_branch;
  for (size_t i = 0; i < n; ++i) {
    SEQRT_ASSIGN_OR_RETURN(ValueInfo type,
                           subgraph_output_type(ctx, attr, branch, i));
    ctx.set_output(i, type.dtype, type.shape);
  }
  return Status::ok();
}

bool if_branch_is_live(const InferContext& ctx, const std::string& attr) {
  const Tensor* cond = ctx.input_value(0);
  if (cond == nullptr || cond->num_elements() != 1) return true;
  return (cond->element_i64(0) != 0) == (attr == "then_branch");
}

Status run_if(KernelContext& ctx) {
  const Tensor& cond = *ctx.input(0);
  SEQRT_RETURN_IF_ERROR(check_cond_type(ctx, cond.dtype(), cond.shape()));
  bool taken = cond.element_i64(0) != 0;
  const char* attr = taken ? "then_branch" : "else_branch";
  SEQRT_ASSIGN_OR_RETURN(const Graph* branch,
                         subgraph_attr(ctx, attr, 0, ctx.num_outputs()));
  SEQRT_ASSIGN_OR_RETURN(std::vector<Tensor> outputs,
                         run_body(ctx, attr, *branch, {}));
  for (size_t i = 0; i < outputs.size(); ++i) {
    ctx.set_output(i, std::move(outputs[i]));
  }
  return Status::ok();
}

}  // namespace

void register_if(OpRegistry& registry) {
  OpSchema s;
  s.name = "If";
  s.doc = "runs then_branch or else_branch depending on a bool condition";
  s.inputs = {{"cond"}};
  s.outputs = {{"outputs", false, true}};
  s.attrs = {
      AttrSpec{"then_branch", AttrType::kGraph, std::nullopt, true, {}},
      AttrSpec{"else_branch", AttrType::kGraph, std::nullopt, true, {}},
  };
  s.infer = infer_if;
  s.subgraph_is_live = if_branch_is_live;
  s.reference = run_if;
  register_or_die(registry, std::move(s));
}

}  // namespace seqrt
