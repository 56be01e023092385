// Scan (opset 16+ semantics): N state variables then M scan inputs. The
// body runs once per element along each scan input's axis, taking the
// states and one slice of every scan input, and gives the new states and
// K per-step scan outputs, which are stacked along their output axes.
#include <cstdint>
#include <memory>

#include "graph/run_control.h"
#include "ops/control/loop_body.h"
#include "ops/control/subgraph.h"
#include "ops/registry.h"
#include "ops/util.h"

namespace seqrt {
namespace {

// The counts and per-input/per-output attributes of one Scan node.
struct ScanLayout {
  size_t num_states = 0;        // N
  size_t num_scan_inputs = 0;   // M
  size_t num_scan_outputs = 0;  // K
  std::vector<int64_t> input_axes;
  std::vector<int64_t> input_directions;
  std::vector<int64_t> output_axes;
  std::vector<int64_t> output_directions;
};

// An optional ints attribute with one entry per input/output; `fill` when
// absent.
Result<std::vector<int64_t>> per_item_attr(const OpContext& ctx,
                                           const std::string& name,
                                           size_t count, int64_t fill) {
  if (ctx.node().attr(name) == nullptr) {
    return std::vector<int64_t>(count, fill);
  }
  const std::vector<int64_t>& values = ctx.attr_ints(name);
  if (values.size() != count) {
    return ctx.error("attribute '{}' must have {} entries, got {}", name, count,
                     values.size());
  }
  return values;
}

Status check_directions(const OpContext& ctx, const std::string& name,
                        const std::vector<int64_t>& directions) {
  for (int64_t direction : directions) {
    if (direction != 0 && direction != 1) {
      return ctx.error("attribute '{}' entries must be 0 or 1, got {}", name,
                       direction);
    }
  }
  return Status::ok();
}

Result<ScanLayout> scan_layout(const OpContext& ctx, size_t num_inputs,
                               size_t num_outputs) {
  int64_t m = ctx.attr_int("num_scan_inputs");
  if (m < 1 || static_cast<size_t>(m) > num_inputs) {
    return ctx.error("num_scan_inputs must be in [1, {}], got {}", num_inputs,
                     m);
  }
  ScanLayout layout;
  layout.num_scan_inputs = static_cast<size_t>(m);
  layout.num_states = num_inputs - layout.num_scan_inputs;
  if (num_outputs < layout.num_states) {
    return ctx.error("has {} state variables but only {} outputs",
                     layout.num_states, num_outputs);
  }
  layout.num_scan_outputs = num_outputs - layout.num_states;
  size_t mm = layout.num_scan_inputs;
  size_t k = layout.num_scan_outputs;
  SEQRT_ASSIGN_OR_RETURN(layout.input_axes,
                         per_item_attr(ctx, "scan_input_axes", mm, 0));
  SEQRT_ASSIGN_OR_RETURN(layout.input_directions,
                         per_item_attr(ctx, "scan_input_directions", mm, 0));
  SEQRT_ASSIGN_OR_RETURN(layout.output_axes,
                         per_item_attr(ctx, "scan_output_axes", k, 0));
  SEQRT_ASSIGN_OR_RETURN(layout.output_directions,
                         per_item_attr(ctx, "scan_output_directions", k, 0));
  SEQRT_RETURN_IF_ERROR(
      check_directions(ctx, "scan_input_directions", layout.input_directions));
  SEQRT_RETURN_IF_ERROR(check_directions(ctx, "scan_output_directions",
                                         layout.output_directions));
  return layout;
}

// The node's inputs must match the body's declared input dtypes.
Status check_body_inputs(const OpContext& ctx, const Graph& body,
                         const std::vector<DType>& node_dtypes,
                         size_t num_states) {
  for (size_t i = 0; i < node_dtypes.size(); ++i) {
    std::string what = fmt::format("{} {} (input {}, body input '{}')",
                                   i < num_states ? "state" : "scan input",
                                   i < num_states ? i : i - num_states, i,
                                   body.value(body.inputs[i]).name);
    SEQRT_RETURN_IF_ERROR(check_same_type(
        ctx, what, body.value(body.inputs[i]).dtype, node_dtypes[i]));
  }
  return Status::ok();
}

// The sequence length known at inference time: the first fixed or
// symbolic dim among the scan inputs; fixed dims that differ are an error.
Result<Dim> infer_length(const InferContext& ctx, const ScanLayout& layout) {
  Dim length;
  for (size_t j = 0; j < layout.num_scan_inputs; ++j) {
    const std::optional<Shape>& shape = ctx.input_shape(layout.num_states + j);
    if (!shape.has_value()) continue;
    SEQRT_ASSIGN_OR_RETURN(int64_t axis,
                           normalize_axis(ctx, layout.input_axes[j],
                                          static_cast<int64_t>(shape->rank())));
    const Dim& dim = (*shape)[axis];
    if (length.is_fixed() && dim.is_fixed() && length != dim) {
      return ctx.error("scan inputs disagree on the sequence length: {} and {}",
                       length.value(), dim.value());
    }
    if (length.is_unknown() || (dim.is_fixed() && !length.is_fixed())) {
      length = dim;
    }
  }
  return length;
}

// Body inputs the body leaves untyped take the states' types and the scan
// inputs' types without their scan axis.
Status type_scan_body(const InferContext& ctx, const std::string& attr,
                      Graph& body) {
  SEQRT_ASSIGN_OR_RETURN(ScanLayout layout,
                         scan_layout(ctx, ctx.num_inputs(), ctx.num_outputs()));
  if (body.inputs.size() != ctx.num_inputs()) {
    return ctx.error("'{}' must take {} inputs, it takes {}", attr,
                     ctx.num_inputs(), body.inputs.size());
  }
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    std::optional<Shape> shape = ctx.input_shape(i);
    if (i >= layout.num_states && shape.has_value()) {
      SEQRT_ASSIGN_OR_RETURN(
          int64_t axis,
          normalize_axis(ctx, layout.input_axes[i - layout.num_states],
                         static_cast<int64_t>(shape->rank())));
      shape->dims().erase(shape->dims().begin() + axis);
    }
    declare_body_input(body, i, ctx.input_dtype(i), shape);
  }
  return Status::ok();
}

Status infer_scan(InferContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(ScanLayout layout,
                         scan_layout(ctx, ctx.num_inputs(), ctx.num_outputs()));
  size_t n = layout.num_states;
  SEQRT_ASSIGN_OR_RETURN(const Graph* body,
                         subgraph_attr(ctx, "body", n + layout.num_scan_inputs,
                                       ctx.num_outputs()));
  std::vector<DType> dtypes;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    dtypes.push_back(ctx.input_dtype(i));
  }
  SEQRT_RETURN_IF_ERROR(check_body_inputs(ctx, *body, dtypes, n));
  SEQRT_ASSIGN_OR_RETURN(Dim length, infer_length(ctx, layout));
  for (size_t i = 0; i < n; ++i) {
    SEQRT_ASSIGN_OR_RETURN(ValueInfo out,
                           subgraph_output_type(ctx, "body", *body, i));
    SEQRT_RETURN_IF_ERROR(
        check_same_type(ctx, fmt::format("body output {} (new state {})", i, i),
                        ctx.input_dtype(i), out.dtype));
    SEQRT_ASSIGN_OR_RETURN(
        std::optional<Shape> shape,
        merge_shapes(ctx, fmt::format("state {} and its update", i),
                     ctx.input_shape(i), out.shape, RankRule::kMustMatch));
    ctx.set_output(i, out.dtype, std::move(shape));
  }
  for (size_t k = 0; k < layout.num_scan_outputs; ++k) {
    SEQRT_ASSIGN_OR_RETURN(ValueInfo out,
                           subgraph_output_type(ctx, "body", *body, n + k));
    std::optional<Shape> shape;
    if (out.shape.has_value()) {
      SEQRT_ASSIGN_OR_RETURN(
          int64_t axis,
          normalize_axis(ctx, layout.output_axes[k],
                         static_cast<int64_t>(out.shape->rank()) + 1));
      shape = insert_dim(out.shape, axis, length);
    }
    ctx.set_output(n + k, out.dtype, std::move(shape));
  }
  return Status::ok();
}

// The normalised scan axes of the inputs and their common length.
Result<int64_t> run_length(const KernelContext& ctx, const ScanLayout& layout,
                           std::vector<int64_t>& axes) {
  int64_t length = -1;
  for (size_t j = 0; j < layout.num_scan_inputs; ++j) {
    const Tensor& x = *ctx.input(layout.num_states + j);
    SEQRT_ASSIGN_OR_RETURN(int64_t axis,
                           normalize_axis(ctx, layout.input_axes[j],
                                          static_cast<int64_t>(x.rank())));
    if (length >= 0 && x.dim(axis) != length) {
      return ctx.error(
          "scan inputs disagree on the sequence length: {} and {} (scan "
          "input {})",
          length, x.dim(axis), j);
    }
    length = x.dim(axis);
    axes.push_back(axis);
  }
  return length;
}

// One scan output, stacked as the steps come: the stacked tensor is
// allocated when step 0 gives the step's type, and each later step's
// storage is offered to the body (LoopBody::offer_output) where the step is
// a contiguous, aligned block of it, so its kernel writes it in place;
// other steps are copied in.
class StackedScanOutput {
 public:
  StackedScanOutput(size_t k, int64_t axis, bool reverse)
      : what_(fmt::format("scan output {}", k)),
        axis_(axis),
        reverse_(reverse) {}

  // Where step `t` should be written, or an empty tensor.
  Tensor slot(int64_t t) const {
    if (stacked_ == nullptr || split_.outer != 1) return Tensor();
    char* at = static_cast<char*>(stacked_->mutable_data()) +
               position(t) * step_bytes_;
    if (reinterpret_cast<uintptr_t>(at) % 64 != 0) return Tensor();
    return Tensor::writable_view(step_dtype_, step_dims_, at, stacked_);
  }

  Status add(const OpContext& ctx, int64_t t, const Tensor& step) {
    if (stacked_ == nullptr) SEQRT_RETURN_IF_ERROR(start(ctx, step));
    if (step.dtype() != step_dtype_ || step.dims() != step_dims_) {
      return ctx.error(
          "{} must have the same type at every step: step 0 gave {}{}, step "
          "{} gave {}{}",
          what_, dtype_name(step_dtype_), dims_to_string(step_dims_), t,
          dtype_name(step.dtype()), dims_to_string(step.dims()));
    }
    const int64_t index = position(t);
    const char* at =
        static_cast<const char*>(stacked_->data()) + index * step_bytes_;
    // A step computed in its slot is in place already.
    if (split_.outer == 1 && step.data() == at) return Status::ok();
    store_slice(*stacked_, axis_, index, step);
    return Status::ok();
  }

  // The stacked output of `length` steps (all added); with no steps, the
  // type comes from the body's `declared` output (ScanOutputStack).
  Result<Tensor> finish(const OpContext& ctx, const Value& declared) {
    if (stacked_ != nullptr) return *stacked_;
    return ScanOutputStack(what_, axis_, reverse_).stack(ctx, 0, declared);
  }

  void set_length(int64_t length) { length_ = length; }

 private:
  int64_t position(int64_t t) const { return reverse_ ? length_ - 1 - t : t; }

  // Allocates the stacked tensor for steps like `step`, after checking it
  // against the run's limits (graph/run_control.h).
  Status start(const OpContext& ctx, const Tensor& step) {
    step_dtype_ = step.dtype();
    step_dims_ = step.dims();
    std::vector<int64_t> dims = step_dims_;
    SEQRT_ASSIGN_OR_RETURN(
        axis_,
        normalize_axis(ctx, axis_, static_cast<int64_t>(dims.size()) + 1));
    dims.insert(dims.begin() + axis_, length_);
    if (const RunControl* control = RunControl::current()) {
      auto subject = [&] {
        return fmt::format("{}: {} of {} steps", ctx.node().label(), what_,
                           length_);
      };
      SEQRT_RETURN_IF_ERROR(
          control->check_allocation(step_dtype_, dims, false, subject));
      if (control->limits().memory_budget_bytes > 0) {
        SEQRT_ASSIGN_OR_RETURN(
            held_,
            control->hold(static_cast<int64_t>(step.byte_size()) * length_,
                          subject));
      }
    }
    SEQRT_ASSIGN_OR_RETURN(Tensor stacked, Tensor::allocate(step_dtype_, dims));
    stacked_ = std::make_shared<Tensor>(std::move(stacked));
    split_ = split_around_axis(dims, axis_);
    step_bytes_ = split_.inner * static_cast<int64_t>(dtype_size(step_dtype_));
    return Status::ok();
  }

  std::string what_;
  int64_t axis_;
  bool reverse_;
  int64_t length_ = 0;
  DType step_dtype_ = DType::kUndefined;
  std::vector<int64_t> step_dims_;
  std::shared_ptr<Tensor> stacked_;  // once step 0 came
  AxisSplit split_;
  int64_t step_bytes_ = 0;  // bytes of one step where split_.outer is 1
  HeldBytes held_;          // the stacked bytes, under a memory budget
};

Status run_scan(KernelContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(ScanLayout layout,
                         scan_layout(ctx, ctx.num_inputs(), ctx.num_outputs()));
  size_t n = layout.num_states;
  SEQRT_ASSIGN_OR_RETURN(const Graph* body,
                         subgraph_attr(ctx, "body", n + layout.num_scan_inputs,
                                       ctx.num_outputs()));
  std::vector<DType> dtypes;
  std::vector<Tensor> states;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) return ctx.error("input {} is missing", i);
    dtypes.push_back(ctx.input(i)->dtype());
    if (i < n) states.push_back(*ctx.input(i));
  }
  SEQRT_RETURN_IF_ERROR(check_body_inputs(ctx, *body, dtypes, n));
  std::vector<int64_t> axes;
  SEQRT_ASSIGN_OR_RETURN(int64_t length, run_length(ctx, layout, axes));
  std::vector<StackedScanOutput> stacks;
  for (size_t k = 0; k < layout.num_scan_outputs; ++k) {
    stacks.emplace_back(k, layout.output_axes[k],
                        layout.output_directions[k] == 1);
    stacks.back().set_length(length);
  }
  // Prepared once for all iterations where the executor can.
  LoopBody loop_body(ctx, "body", *body);
  SEQRT_RETURN_IF_ERROR(loop_body.prepare());
  for (int64_t t = 0; t < length; ++t) {
    SEQRT_RETURN_IF_ERROR(check_iteration(ctx, t));
    // The states move in: the body's outputs of one iteration are the
    // next one's inputs, never copied.
    std::vector<Tensor> body_inputs;
    body_inputs.reserve(n + layout.num_scan_inputs);
    for (Tensor& state : states) body_inputs.push_back(std::move(state));
    for (size_t j = 0; j < layout.num_scan_inputs; ++j) {
      int64_t index = layout.input_directions[j] == 1 ? length - 1 - t : t;
      SEQRT_ASSIGN_OR_RETURN(Tensor slice,
                             slice_or_view(*ctx.input(n + j), axes[j], index));
      body_inputs.push_back(std::move(slice));
    }
    for (size_t k = 0; k < stacks.size(); ++k) {
      loop_body.offer_output(n + k, stacks[k].slot(t));
    }
    SEQRT_ASSIGN_OR_RETURN(std::vector<Tensor> outputs,
                           loop_body.run(std::move(body_inputs)));
    for (size_t i = 0; i < n; ++i) {
      if (outputs[i].dtype() != dtypes[i]) {  // the message only then
        return check_same_type(
            ctx, fmt::format("body output {} (new state {})", i, i), dtypes[i],
            outputs[i].dtype());
      }
      states[i] = std::move(outputs[i]);
    }
    for (size_t k = 0; k < stacks.size(); ++k) {
      SEQRT_RETURN_IF_ERROR(stacks[k].add(ctx, t, outputs[n + k]));
    }
  }
  for (size_t i = 0; i < n; ++i) ctx.set_output(i, states[i]);
  for (size_t k = 0; k < stacks.size(); ++k) {
    SEQRT_ASSIGN_OR_RETURN(
        Tensor stacked,
        stacks[k].finish(ctx, body->value(body->outputs[n + k])));
    ctx.set_output(n + k, std::move(stacked));
  }
  return Status::ok();
}

}  // namespace

void register_scan(OpRegistry& registry) {
  OpSchema s;
  s.name = "Scan";
  s.doc = "runs a body over slices of scan inputs, carrying state variables";
  s.inputs = {{"initial_state_and_scan_inputs", false, true}};
  s.outputs = {{"final_state_and_scan_outputs", false, true}};
  s.attrs = {
      AttrSpec{"body", AttrType::kGraph, std::nullopt, true, {}},
      AttrSpec{"num_scan_inputs", AttrType::kInt, std::nullopt, true, {}},
      AttrSpec{"scan_input_axes", AttrType::kInts, std::nullopt, false, {}},
      AttrSpec{
          "scan_input_directions", AttrType::kInts, std::nullopt, false, {}},
      AttrSpec{"scan_output_axes", AttrType::kInts, std::nullopt, false, {}},
      AttrSpec{
          "scan_output_directions", AttrType::kInts, std::nullopt, false, {}},
  };
  s.infer = infer_scan;
  s.type_body_inputs = type_scan_body;
  s.reference = run_scan;
  register_or_die(registry, std::move(s));
}

}  // namespace seqrt
