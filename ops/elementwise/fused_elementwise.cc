// seqrt::FusedElementwise: a chain of ONNX elementwise ops run as one node
// (compiler/passes/fuse_elementwise.cc makes them). The `body` graph holds the
// chain: its inputs are the node's inputs broadcast to the output shape, its
// one output is the node's output, and its constants are the chain's
// scalars. Backends evaluate the body in one pass over memory; this
// reference runs it node by node, which is exactly the unfused graph.
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "ops/control/subgraph.h"
#include "ops/elementwise/elementwise.h"
#include "ops/registry.h"
#include "ops/type_support.h"

namespace seqrt {
namespace {

// The ops a body may hold: elementwise, float in and out, no subgraphs.
const std::set<std::string>& body_ops() {
  static const std::set<std::string> ops = {
      "Sqrt", "Exp",     "Log",  "Neg",      "Abs",  "Reciprocal", "Erf",
      "Tanh", "Sigmoid", "Relu", "Softplus", "Gelu", "Add",        "Sub",
      "Mul",  "Div",     "Pow",  "Max",      "Min"};
  return ops;
}

const DTypeSet kComputeTypes{DType::kF32, DType::kF16, DType::kBF16};

Status check_body_nodes(const OpContext& ctx, const Graph& body) {
  if (!body.captures.empty()) {
    return ctx.error("the body must not capture outer values, it reads '{}'",
                     body.value(body.captures[0]).name);
  }
  if (body.nodes.empty()) return ctx.error("the body has no nodes");
  bool output_computed = false;
  for (const Node& node : body.nodes) {
    if (node.domain != kOnnxDomain || body_ops().count(node.op) == 0) {
      return ctx.error(
          "body node {} is not one of the elementwise ops a fused body may "
          "hold (Sqrt Exp Log Neg Abs Reciprocal Erf Tanh Sigmoid Relu "
          "Softplus Gelu Add Sub Mul Div Pow Max Min)",
          node.label());
    }
    for (ValueId out : node.outputs) {
      output_computed = output_computed || out == body.outputs[0];
    }
  }
  if (!output_computed) {
    return ctx.error("the body's output '{}' must be computed by a body node",
                     body.value(body.outputs[0]).name);
  }
  return Status::ok();
}

// The body's output shape, where known, must be the broadcast shape.
Status check_body_shape(const InferContext& ctx, const std::optional<Shape>& a,
                        const std::optional<Shape>& b) {
  if (!a.has_value() || !b.has_value()) return Status::ok();
  bool same = a->rank() == b->rank();
  for (size_t i = 0; same && i < a->rank(); ++i) {
    const Dim& x = (*a)[i];
    const Dim& y = (*b)[i];
    if (x.is_fixed() && y.is_fixed() && x.value() != y.value()) same = false;
  }
  if (same) return Status::ok();
  return ctx.error("the body gives shape {}, the inputs broadcast to {}",
                   a->to_string(), b->to_string());
}

Status infer_fused_elementwise(InferContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(const Graph* body,
                         subgraph_attr(ctx, "body", ctx.num_inputs(), 1));
  SEQRT_RETURN_IF_ERROR(check_body_nodes(ctx, *body));
  SEQRT_ASSIGN_OR_RETURN(ValueInfo out,
                         subgraph_output_type(ctx, "body", *body, 0));
  SEQRT_RETURN_IF_ERROR(
      check_input_dtype(ctx, "the body's output", out.dtype, kComputeTypes));
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    std::string what = "input " + std::to_string(i);
    if (!ctx.has_input(i)) return ctx.error("{} is missing", what);
    SEQRT_RETURN_IF_ERROR(check_same_type(ctx, what + " (the body's output)",
                                          out.dtype, ctx.input_dtype(i)));
    DType declared = body->value(body->inputs[i]).dtype;
    if (declared != DType::kUndefined) {
      SEQRT_RETURN_IF_ERROR(check_same_type(ctx, "the body's " + what,
                                            ctx.input_dtype(i), declared));
    }
  }
  SEQRT_ASSIGN_OR_RETURN(std::optional<Shape> shape,
                         infer_broadcast_shape(ctx));
  SEQRT_RETURN_IF_ERROR(check_body_shape(ctx, out.shape, shape));
  ctx.set_output(0, out.dtype, std::move(shape));
  return Status::ok();
}

// Input k of the loop, copied out to the loop's output dims.
Result<Tensor> broadcast_input(const Tensor& x, const BroadcastLoop& loop,
                               size_t k) {
  SEQRT_ASSIGN_OR_RETURN(Tensor out,
                         Tensor::allocate(x.dtype(), loop.out_dims()));
  size_t size = dtype_size(x.dtype());
  const auto* src = static_cast<const unsigned char*>(x.data());
  auto* dst = static_cast<unsigned char*>(out.mutable_data());
  for (int64_t i = 0; i < loop.num_elements(); ++i) {
    std::memcpy(dst + i * size, src + loop.index(k, i) * size, size);
  }
  return out;
}

Status run_fused_elementwise(KernelContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(const Graph* body,
                         subgraph_attr(ctx, "body", ctx.num_inputs(), 1));
  SEQRT_RETURN_IF_ERROR(check_body_nodes(ctx, *body));
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) return ctx.error("input {} is missing", i);
    std::string what = "input " + std::to_string(i);
    SEQRT_RETURN_IF_ERROR(
        check_input_dtype(ctx, what, ctx.input(i)->dtype(), kComputeTypes));
    SEQRT_RETURN_IF_ERROR(check_same_dtype(
        ctx, "input 0", ctx.input(0)->dtype(), what, ctx.input(i)->dtype()));
  }
  SEQRT_ASSIGN_OR_RETURN(BroadcastLoop loop, BroadcastLoop::create(ctx));
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    SEQRT_ASSIGN_OR_RETURN(Tensor x, broadcast_input(*ctx.input(i), loop, i));
    inputs.push_back(std::move(x));
  }
  SEQRT_ASSIGN_OR_RETURN(std::vector<Tensor> result,
                         run_body(ctx, "body", *body, inputs));
  const Tensor& y = result[0];
  DType dtype = ctx.input(0)->dtype();
  if (y.dtype() != dtype || y.dims() != loop.out_dims()) {
    return ctx.error("the body must give {}{}, it gave {}{}", dtype_name(dtype),
                     dims_to_string(loop.out_dims()), dtype_name(y.dtype()),
                     dims_to_string(y.dims()));
  }
  SEQRT_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocate_output(0, dtype, loop.out_dims()));
  if (y.byte_size() > 0) {
    std::memcpy(out->mutable_data(), y.data(), y.byte_size());
  }
  return Status::ok();
}

}  // namespace

void register_fused_elementwise(OpRegistry& registry) {
  OpSchema s;
  s.domain = kSeqrtDomain;
  s.name = "FusedElementwise";
  s.doc = "a chain of elementwise ops (the body graph) run as one node";
  s.inputs = {{"inputs", false, true}};
  s.outputs = {{"Y"}};
  s.attrs = {AttrSpec{"body", AttrType::kGraph, std::nullopt, true, {}}};
  s.infer = infer_fused_elementwise;
  s.reference = run_fused_elementwise;
  register_or_die(registry, std::move(s));
}

}  // namespace seqrt
