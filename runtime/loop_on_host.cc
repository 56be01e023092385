#include "runtime/loop_on_host.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "graph/limits.h"
#include "graph/run_control.h"
#include "runtime/deferred_executable.h"
#include "runtime/if_on_host.h"

namespace seqrt {
namespace {

// Where `id` is among `values`, or -1.
int index_of(const std::vector<ValueId>& values, ValueId id) {
  auto it = std::find(values.begin(), values.end(), id);
  return it == values.end() ? -1 : static_cast<int>(it - values.begin());
}

// One bool or int64 scalar, as the Loop's M, cond and the body's condition
// must be.
Result<int64_t> scalar_of(const Tensor& t, DType dtype,
                          const std::string& what) {
  if (t.dtype() != dtype || t.num_elements() != 1) {
    return invalid_argument("{} must be one {}, got {} {}", what,
                            dtype_name(dtype), dtype_name(t.dtype()),
                            dims_to_string(t.dims()));
  }
  return t.element_i64(0);
}

// The steps of a scan output stacked along a new first axis.
Result<Tensor> stack(const std::vector<Tensor>& steps, const Value& declared,
                     const std::string& what) {
  std::vector<int64_t> dims;
  if (steps.empty()) {  // zero iterations: the body's declared step shape
    if (!declared.shape || !declared.shape->is_fixed()) {
      return unsupported(
          "{}: the loop ran no iteration and the body's step "
          "shape is not fixed, so its shape is unknown",
          what);
    }
    dims = declared.shape->fixed_dims();
  } else {
    dims = steps.front().dims();
  }
  const DType dtype = steps.empty() ? declared.dtype : steps.front().dtype();
  std::vector<int64_t> stacked = dims;
  stacked.insert(stacked.begin(), static_cast<int64_t>(steps.size()));
  SEQRT_ASSIGN_OR_RETURN(Tensor out, Tensor::allocate(dtype, stacked));
  char* to = static_cast<char*>(out.mutable_data());
  for (size_t i = 0; i < steps.size(); ++i) {
    if (steps[i].dims() != dims || steps[i].dtype() != dtype) {
      return invalid_argument(
          "{} must have one type at every iteration: iteration 0 gave {}{}, "
          "iteration {} gave {}{}",
          what, dtype_name(dtype), dims_to_string(dims), i,
          dtype_name(steps[i].dtype()), dims_to_string(steps[i].dims()));
    }
    const size_t bytes = steps[i].byte_size();
    if (bytes > 0) std::memcpy(to + i * bytes, steps[i].data(), bytes);
  }
  return out;
}

class LoopOnHost : public Executable {
 public:
  struct Layout {
    int m = -1, cond = -1;     // segment input indices; -1: absent
    std::vector<int> carried;  // segment input index per carried value
    std::vector<size_t> fed;   // segment input per captured body input
    std::vector<int> outputs;  // per segment output: its Loop output
    std::vector<Value> steps;  // the body's scan outputs as declared
  };

  LoopOnHost(std::string label, Layout layout, std::unique_ptr<Executable> body)
      : label_(std::move(label)),
        layout_(std::move(layout)),
        body_(std::move(body)) {}

  Result<std::vector<Tensor>> run(std::vector<Tensor> inputs) const override {
    Result<std::vector<Tensor>> out = iterate(inputs);
    if (!out.is_ok()) return out.status().with_context(label_);
    return out;
  }

  std::vector<NodeProfile> profile() const override { return body_->profile(); }

  Result<std::vector<KernelPlanEntry>> kernel_plan(
      const std::map<std::string, int64_t>& bindings) const override {
    return body_->kernel_plan(bindings);
  }

  std::string placement_report(
      const std::map<std::string, int64_t>& bindings) const override {
    return nested_report("body", body_->placement_report(bindings));
  }

 private:
  Result<std::vector<Tensor>> iterate(std::vector<Tensor>& inputs) const {
    int64_t max_trips = -1;
    bool cond = true;
    if (layout_.m >= 0) {
      SEQRT_ASSIGN_OR_RETURN(
          max_trips, scalar_of(inputs.at(layout_.m), DType::kI64, "input M"));
      if (max_trips < 0) {
        return invalid_argument("input M must be >= 0, got {}", max_trips);
      }
    }
    if (layout_.cond >= 0) {
      SEQRT_ASSIGN_OR_RETURN(int64_t c, scalar_of(inputs.at(layout_.cond),
                                                  DType::kBool, "input cond"));
      cond = c != 0;
    }
    std::vector<Tensor> carried;
    for (int i : layout_.carried) carried.push_back(inputs.at(i));
    const size_t n = carried.size();
    std::vector<std::vector<Tensor>> steps(layout_.steps.size());
    const RunControl* control = RunControl::current();
    const int64_t limit = control != nullptr
                              ? control->limits().max_loop_iterations
                              : Limits().max_loop_iterations;
    int64_t trips = 0;
    while (cond && (max_trips < 0 || trips < max_trips)) {
      if (trips == limit) {
        return limit_error(LimitKind::kMaxLoopIterations, label_, trips + 1,
                           limit);
      }
      SEQRT_RETURN_IF_ERROR(check_run_stop(
          [&] { return fmt::format("at iteration {}", trips); }));
      std::vector<Tensor> body_in;
      body_in.push_back(Tensor::scalar<int64_t>(trips));
      body_in.push_back(Tensor::scalar<bool>(cond));
      for (Tensor& value : carried) body_in.push_back(std::move(value));
      for (size_t i : layout_.fed) body_in.push_back(inputs.at(i));
      SEQRT_ASSIGN_OR_RETURN(std::vector<Tensor> out,
                             body_->run(std::move(body_in)));
      if (out.size() != 1 + n + steps.size()) {
        return internal_error("the body gave {} outputs, expected {}",
                              out.size(), 1 + n + steps.size());
      }
      SEQRT_ASSIGN_OR_RETURN(
          int64_t c,
          scalar_of(out[0], DType::kBool, "body output 0 (the condition)"));
      cond = c != 0;
      for (size_t i = 0; i < n; ++i) carried[i] = std::move(out[1 + i]);
      for (size_t k = 0; k < steps.size(); ++k) {
        steps[k].push_back(std::move(out[1 + n + k]));
      }
      ++trips;
    }
    std::vector<Tensor> loop_outputs = std::move(carried);
    for (size_t k = 0; k < steps.size(); ++k) {
      SEQRT_ASSIGN_OR_RETURN(
          Tensor stacked,
          stack(steps[k], layout_.steps[k], fmt::format("scan output {}", k)));
      loop_outputs.push_back(std::move(stacked));
    }
    std::vector<Tensor> result;
    for (int o : layout_.outputs) result.push_back(loop_outputs.at(o));
    return result;
  }

  std::string label_;
  Layout layout_;
  std::unique_ptr<Executable> body_;
};

}  // namespace

Result<std::unique_ptr<Executable>> compile_loop_on_host(
    const Graph& segment, Backend& list, const CompileOptions& options) {
  if (segment.nodes.size() != 1 || segment.nodes[0].op != "Loop") {
    return internal_error("graph '{}' is not one Loop node", segment.name);
  }
  const Node& node = segment.nodes[0];
  const Attribute* attr = node.attr("body");
  if (attr == nullptr || attr->type() != AttrType::kGraph) {
    return invalid_argument("{}: no body graph", node.label());
  }
  LoopOnHost::Layout layout;
  auto input_at = [&](size_t i) {
    return i < node.inputs.size() && node.inputs[i] != kNoValue
               ? index_of(segment.inputs, node.inputs[i])
               : -1;
  };
  layout.m = input_at(0);
  layout.cond = input_at(1);
  for (size_t i = 2; i < node.inputs.size(); ++i) {
    const int at = input_at(i);
    if (at < 0) {
      return internal_error("{}: carried value {} is not a segment input",
                            node.label(), i - 2);
    }
    layout.carried.push_back(at);
  }
  for (ValueId id : segment.outputs) {
    const int at = index_of(node.outputs, id);
    if (at < 0) {
      return internal_error("{}: segment output '{}' is not the Loop's",
                            node.label(), segment.value(id).name);
    }
    layout.outputs.push_back(at);
  }
  SEQRT_ASSIGN_OR_RETURN(
      Graph body, standalone_subgraph(segment, *attr->as_graph(),
                                      segment.name + "/body", layout.fed));
  const size_t n = layout.carried.size();
  for (size_t k = 1 + n; k < body.outputs.size(); ++k) {
    layout.steps.push_back(body.value(body.outputs[k]));
  }
  // Compiled per signature of input dims: a carried value may change shape
  // from one iteration to the next.
  auto executable =
      std::make_unique<DeferredExecutable>(std::move(body), list, options);
  return std::unique_ptr<Executable>(
      new LoopOnHost(node.label(), std::move(layout), std::move(executable)));
}

}  // namespace seqrt
