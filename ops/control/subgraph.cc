#include "ops/control/subgraph.h"

#include <cstring>

#include "ops/util.h"

namespace seqrt {

Result<const Graph*> subgraph_attr(const OpContext& ctx,
                                   const std::string& attr, size_t num_inputs,
                                   size_t num_outputs) {
  const Graph* body = ctx.attr_graph(attr).get();
  if (body == nullptr) return ctx.error("graph attribute '{}' is empty", attr);
  if (body->inputs.size() != num_inputs) {
    return ctx.error("'{}' must take {} inputs, it takes {}", attr, num_inputs,
                     body->inputs.size());
  }
  if (body->outputs.size() != num_outputs) {
    return ctx.error("'{}' must give {} outputs, it gives {}", attr,
                     num_outputs, body->outputs.size());
  }
  return body;
}

Result<ValueInfo> subgraph_output_type(const OpContext& ctx,
                                       const std::string& attr,
                                       const Graph& body, size_t i) {
  const Value& value = body.value(body.outputs[i]);
  if (value.dtype == DType::kUndefined) {
    return ctx.error("output {} ('{}') of '{}' has no known dtype", i,
                     value.name, attr);
  }
  return ValueInfo{value.dtype, value.shape, nullptr};
}

void declare_body_input(Graph& body, size_t i, DType dtype,
                        const std::optional<Shape>& shape) {
  Value& value = body.value(body.inputs[i]);
  if (value.dtype == DType::kUndefined) value.dtype = dtype;
  if (!value.shape.has_value()) value.shape = shape;
}

Status check_same_type(const OpContext& ctx, const std::string& what,
                       DType expected, DType got) {
  if (expected == got) return Status::ok();
  return ctx.error("{} must be {}, got {}", what, dtype_name(expected),
                   dtype_name(got));
}

Result<std::optional<Shape>> merge_shapes(const OpContext& ctx,
                                          const std::string& what,
                                          const std::optional<Shape>& a,
                                          const std::optional<Shape>& b,
                                          RankRule rule) {
  if (!a.has_value() || !b.has_value()) return std::optional<Shape>();
  if (a->rank() != b->rank() && rule == RankRule::kMayDiffer) {
    return std::optional<Shape>();
  }
  if (a->rank() != b->rank()) {
    return ctx.error("{} differ in rank: {} and {}", what, a->to_string(),
                     b->to_string());
  }
  Shape merged = *a;
  for (size_t d = 0; d < merged.rank(); ++d) {
    if (merged[d] != (*b)[d]) merged[d] = Dim::unknown();
  }
  return std::optional<Shape>(merged);
}

std::optional<Shape> insert_dim(const std::optional<Shape>& shape, int64_t axis,
                                Dim dim) {
  if (!shape.has_value()) return std::nullopt;
  std::vector<Dim> dims = shape->dims();
  dims.insert(dims.begin() + axis, std::move(dim));
  return Shape(std::move(dims));
}

Result<std::vector<Tensor>> run_body(const KernelContext& ctx,
                                     const std::string& attr, const Graph& body,
                                     const std::vector<Tensor>& inputs) {
  if (!ctx.run_subgraph()) {
    return internal_error(
        "{}: no subgraph runner to run '{}'; the executor must provide one",
        ctx.node().label(), attr);
  }
  return finish_body_run(ctx, attr, body, ctx.run_subgraph()(body, inputs));
}

Result<std::vector<Tensor>> finish_body_run(
    const KernelContext& ctx, const std::string& attr, const Graph& body,
    Result<std::vector<Tensor>> outputs) {
  // A cancelled or timed-out run keeps a one-line message, naming the
  // node of the enclosing graph rather than a node inside its body (the
  // stop is sticky, so checking again gives the same code).
  if (!outputs.is_ok() && is_stopped_run(outputs.status())) {
    Status stopped = check_run_stop(
        [&] { return fmt::format("in {} ('{}')", ctx.node().label(), attr); });
    return stopped.is_ok() ? outputs.status() : stopped;
  }
  if (!outputs.is_ok()) {
    return outputs.status().with_context(
        fmt::format("{}: in '{}'", ctx.node().label(), attr));
  }
  if (outputs->size() != body.outputs.size()) {
    return internal_error("{}: '{}' gave {} outputs, it declares {}",
                          ctx.node().label(), attr, outputs->size(),
                          body.outputs.size());
  }
  return outputs;
}

Result<Tensor> slice_along(const Tensor& x, int64_t axis, int64_t index) {
  std::vector<int64_t> dims = x.dims();
  dims.erase(dims.begin() + axis);
  // Smaller than x, but the allocation can still fail (memory budget).
  SEQRT_ASSIGN_OR_RETURN(Tensor slice, Tensor::allocate(x.dtype(), dims));
  const AxisSplit split = split_around_axis(x.dims(), axis);
  const size_t inner_bytes = split.inner * dtype_size(x.dtype());
  const char* src = static_cast<const char*>(x.data());
  char* dst = static_cast<char*>(slice.mutable_data());
  for (int64_t o = 0; o < split.outer; ++o) {
    std::memcpy(dst + o * inner_bytes,
                src + (o * split.n + index) * inner_bytes, inner_bytes);
  }
  return slice;
}

Result<Tensor> slice_or_view(const Tensor& x, int64_t axis, int64_t index) {
  const AxisSplit split = split_around_axis(x.dims(), axis);
  if (split.outer != 1) return slice_along(x, axis, index);
  std::vector<int64_t> dims = x.dims();
  dims.erase(dims.begin() + axis);
  return x.slice_view(
      index * split.inner * static_cast<int64_t>(dtype_size(x.dtype())),
      std::move(dims));
}

void store_slice(Tensor& out, int64_t axis, int64_t index,
                 const Tensor& slice) {
  const AxisSplit split = split_around_axis(out.dims(), axis);
  const size_t inner_bytes = split.inner * dtype_size(out.dtype());
  const char* src = static_cast<const char*>(slice.data());
  char* dst = static_cast<char*>(out.mutable_data());
  for (int64_t o = 0; o < split.outer; ++o) {
    std::memcpy(dst + (o * split.n + index) * inner_bytes,
                src + o * inner_bytes, inner_bytes);
  }
}

Status check_iteration(const OpContext& ctx, int64_t iteration) {
  return check_run_stop([&] {
    return fmt::format("in {} at iteration {}", ctx.node().label(), iteration);
  });
}

Status ScanOutputStack::add(const OpContext& ctx, Tensor step) {
  if (!steps_.empty()) {
    const Tensor& first = steps_.front();
    if (step.dtype() != first.dtype() || step.dims() != first.dims()) {
      return ctx.error(
          "{} must have the same type at every step: step 0 gave {}{}, step "
          "{} gave {}{}",
          what_, dtype_name(first.dtype()), dims_to_string(first.dims()),
          steps_.size(), dtype_name(step.dtype()), dims_to_string(step.dims()));
    }
  }
  if (const RunControl* control = RunControl::current()) {
    std::vector<int64_t> stacked = step.dims();
    SEQRT_ASSIGN_OR_RETURN(
        int64_t axis,
        normalize_axis(ctx, axis_, static_cast<int64_t>(stacked.size()) + 1));
    stacked.insert(stacked.begin() + axis,
                   static_cast<int64_t>(steps_.size()) + 1);
    auto subject = [&] {
      return fmt::format("{}: {} after {} steps", ctx.node().label(), what_,
                         steps_.size() + 1);
    };
    SEQRT_RETURN_IF_ERROR(
        control->check_allocation(step.dtype(), stacked, false, subject));
    if (control->limits().memory_budget_bytes > 0) {
      SEQRT_ASSIGN_OR_RETURN(
          HeldBytes held,
          control->hold(static_cast<int64_t>(step.byte_size()), subject));
      held_.push_back(std::move(held));
    }
  }
  steps_.push_back(std::move(step));
  return Status::ok();
}

Result<Tensor> ScanOutputStack::stack(const OpContext& ctx, int64_t length,
                                      const Value& declared) const {
  std::vector<int64_t> dims;
  DType dtype = declared.dtype;
  if (!steps_.empty()) {
    dims = steps_.front().dims();
    dtype = steps_.front().dtype();
  } else if (declared.dtype != DType::kUndefined &&
             declared.shape.has_value()) {
    // No step ran: the output is empty whatever its other dims are, so dims
    // not fixed in the declared type become 0.
    for (const Dim& dim : declared.shape->dims()) {
      dims.push_back(dim.is_fixed() ? dim.value() : 0);
    }
  } else {
    return ctx.error(
        "{} has no steps and body output '{}' has no declared dtype and "
        "rank, so its type is unknown",
        what_, declared.name);
  }
  SEQRT_ASSIGN_OR_RETURN(
      int64_t axis,
      normalize_axis(ctx, axis_, static_cast<int64_t>(dims.size()) + 1));
  dims.insert(dims.begin() + axis, length);
  SEQRT_ASSIGN_OR_RETURN(Tensor out, Tensor::allocate(dtype, dims));
  for (size_t t = 0; t < steps_.size(); ++t) {
    int64_t index = reverse_ ? length - 1 - static_cast<int64_t>(t)
                             : static_cast<int64_t>(t);
    store_slice(out, axis, index, steps_[t]);
  }
  return out;
}

}  // namespace seqrt
