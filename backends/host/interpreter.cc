#include "backends/host/interpreter.h"

#include <algorithm>
#include <chrono>
#include <optional>

#include "graph/run_control.h"
#include "ops/registry.h"

namespace seqrt {

Status check_graph_inputs(const Graph& graph,
                          const std::vector<Tensor>& inputs) {
  if (inputs.size() != graph.inputs.size()) {
    return invalid_argument("graph '{}' takes {} inputs, got {}", graph.name,
                            graph.inputs.size(), inputs.size());
  }
  std::map<std::string, int64_t> symbols;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value& value = graph.value(graph.inputs[i]);
    const Tensor& tensor = inputs[i];
    // Untyped subgraph inputs are typed by infer_graph; a body run without
    // it takes what its node passes.
    if (value.dtype != DType::kUndefined && tensor.dtype() != value.dtype) {
      return invalid_argument("input '{}' must be {}, got {}", value.name,
                              dtype_name(value.dtype),
                              dtype_name(tensor.dtype()));
    }
    if (!value.shape) continue;
    const Shape& shape = *value.shape;
    if (shape.rank() != tensor.rank()) {
      return invalid_argument("input '{}' must have shape {}, got {}",
                              value.name, shape.to_string(),
                              dims_to_string(tensor.dims()));
    }
    for (size_t d = 0; d < shape.rank(); ++d) {
      const Dim& dim = shape[d];
      if (dim.is_fixed() && dim.value() != tensor.dim(d)) {
        return invalid_argument("input '{}' must have shape {}, got {}",
                                value.name, shape.to_string(),
                                dims_to_string(tensor.dims()));
      }
      if (!dim.is_symbol()) continue;
      auto [it, inserted] = symbols.emplace(dim.symbol_name(), tensor.dim(d));
      if (!inserted && it->second != tensor.dim(d)) {
        return invalid_argument(
            "input '{}' has {} = {} but an earlier input has {} = {}",
            value.name, dim.symbol_name(), tensor.dim(d), dim.symbol_name(),
            it->second);
      }
    }
  }
  return Status::ok();
}

namespace {

// Index of the last node (in `order` position) that reads each value,
// directly or through a capture of one of its subgraphs (a body lists in
// its captures every outer value it or its own bodies read).
std::vector<int> last_uses(const Graph& graph, const std::vector<int>& order) {
  std::vector<int> last(graph.values.size(), -1);
  // Built on the first subgraph only: bodies of Loop and Scan, which are
  // scheduled on every iteration, seldom hold subgraphs themselves.
  std::map<std::string, ValueId> by_name;
  auto outer_value = [&](const std::string& name) {
    if (by_name.empty()) {
      for (size_t id = 0; id < graph.values.size(); ++id) {
        by_name.emplace(graph.values[id].name, static_cast<ValueId>(id));
      }
    }
    auto found = by_name.find(name);
    return found == by_name.end() ? kNoValue : found->second;
  };
  for (size_t pos = 0; pos < order.size(); ++pos) {
    for (ValueId id : graph.nodes[order[pos]].inputs) {
      if (id != kNoValue) last[id] = static_cast<int>(pos);
    }
    for (const auto& [name, attr] : graph.nodes[order[pos]].attrs) {
      if (attr.type() != AttrType::kGraph) continue;
      const Graph& body = *attr.as_graph();
      for (ValueId captured : body.captures) {
        ValueId outer = outer_value(body.value(captured).name);
        if (outer != kNoValue) last[outer] = static_cast<int>(pos);
      }
    }
  }
  for (ValueId id : graph.outputs) last[id] = static_cast<int>(order.size());
  return last;
}

// For each input of `node` (at `pos` of the order), its slot in `env` when
// the node may take it over: this is its last reader, it is read once here,
// and it is not a constant. Nodes with subgraphs give nothing: their bodies
// see every value by name.
std::vector<Tensor*> donations(const Graph& graph, const Node& node,
                               const std::vector<int>& last, int pos,
                               std::vector<Tensor>& env) {
  std::vector<Tensor*> slots(node.inputs.size(), nullptr);
  for (const auto& [name, attr] : node.attrs) {
    if (attr.type() == AttrType::kGraph) return slots;
  }
  for (size_t k = 0; k < node.inputs.size(); ++k) {
    ValueId id = node.inputs[k];
    if (id == kNoValue || last[id] != pos || graph.is_constant(id)) continue;
    if (std::count(node.inputs.begin(), node.inputs.end(), id) == 1) {
      slots[k] = &env[id];
    }
  }
  return slots;
}

Status check_output(const Graph& graph, const Node& node, size_t i,
                    const Tensor& tensor) {
  const Value& value = graph.value(node.outputs[i]);
  if (tensor.empty()) {
    return internal_error("{}: kernel did not produce output '{}'",
                          node.label(), value.name);
  }
  if (value.dtype != DType::kUndefined && value.dtype != tensor.dtype()) {
    return internal_error("{}: output '{}' declared {} but computed {}",
                          node.label(), value.name, dtype_name(value.dtype),
                          dtype_name(tensor.dtype()));
  }
  return Status::ok();
}

// Per value of `graph`, whether the run's memory plan left it out: every
// value of a subgraph (only the top graph is planned) and, in the top
// graph, values whose shape is not known up to the symbolic dims.
std::vector<bool> runtime_sized_values(const Graph& graph, bool is_subgraph) {
  std::vector<bool> sized(graph.values.size(), is_subgraph);
  if (is_subgraph) return sized;
  for (size_t id = 0; id < graph.values.size(); ++id) {
    const std::optional<Shape>& shape = graph.values[id].shape;
    if (!shape) {
      sized[id] = true;
      continue;
    }
    for (const Dim& dim : shape->dims()) {
      if (!dim.is_fixed() && !dim.is_symbol()) sized[id] = true;
    }
  }
  return sized;
}

// Where a run stopped, for the cancel and deadline errors.
std::string stop_place(const Graph& graph, const Node* last, bool is_subgraph) {
  if (last == nullptr) return fmt::format("before graph '{}' ran", graph.name);
  if (!is_subgraph) return "after " + last->label();
  return fmt::format("after {} in graph '{}'", last->label(), graph.name);
}

// True when `tensor` starts where one of `node`'s inputs does: a view (a
// Reshape) or an input updated in place, which holds no new bytes.
bool shares_an_input(const std::vector<const void*>& inputs,
                     const Tensor& tensor) {
  for (const void* input : inputs) {
    if (input != nullptr && input == tensor.data()) return true;
  }
  return false;
}

// What the run's control checks of one graph being interpreted: the limits
// of each node output and, against the budget, the bytes of run-time-sized
// outputs while they live.
class OutputLimits {
 public:
  OutputLimits(const Graph& graph, const RunControl* control, bool is_subgraph)
      : graph_(&graph), control_(control) {
    if (control_ == nullptr) return;
    runtime_sized_ = runtime_sized_values(graph, is_subgraph);
    if (control_->limits().memory_budget_bytes > 0) {
      held_.resize(graph.values.size());
    }
  }

  // For KernelContext::allocate_output, before output `i` is allocated.
  AllocationCheck before_allocation(const Node& node) {
    if (control_ == nullptr) return nullptr;
    // Two pointers, so the function holds it without an allocation.
    return
        [this, &node](size_t i, DType dtype, const std::vector<int64_t>& dims) {
          const ValueId id = node.outputs[i];
          return control_->check_allocation(
              dtype, dims, id == kNoValue || runtime_sized_[id],
              [&] { return output_name(*graph_, node, i); });
        };
  }

  // After the kernel: output `i` as computed (a kernel may allocate its
  // outputs itself), and its bytes held while it lives.
  Status after_kernel(const Graph& graph, const Node& node, size_t i,
                      const Tensor& tensor,
                      const std::vector<const void*>& inputs) {
    if (control_ == nullptr) return Status::ok();
    auto name = [&] { return output_name(graph, node, i); };
    SEQRT_RETURN_IF_ERROR(
        control_->check_allocation(tensor.dtype(), tensor.dims(), false, name));
    const ValueId id = node.outputs[i];
    if (held_.empty() || !runtime_sized_[id] || shares_an_input(inputs, tensor))
      return Status::ok();
    SEQRT_ASSIGN_OR_RETURN(
        held_[id],
        control_->hold(static_cast<int64_t>(tensor.byte_size()), name));
    return Status::ok();
  }

  void release(ValueId id) {
    if (!held_.empty()) held_[id].reset();
  }

 private:
  static std::string output_name(const Graph& graph, const Node& node,
                                 size_t i) {
    const ValueId id = node.outputs[i];
    return fmt::format(
        "{}: output '{}'", node.label(),
        id == kNoValue ? std::to_string(i) : graph.value(id).name);
  }

  const Graph* graph_;
  const RunControl* control_;
  std::vector<bool> runtime_sized_;  // by value, when controlled
  std::vector<HeldBytes> held_;      // by value, when there is a budget
};

// A kernel's error as the run reports it: a limit reached in an allocation
// that did not name the node gets the node's label.
Status kernel_error(const Node& node, const Status& status) {
  if (status.code() == StatusCode::kLimitExceeded &&
      status.message().rfind('[', 0) != 0) {
    return status.with_context(node.label());
  }
  return status;
}

// A subgraph with its schedule, schemas and kernels fixed (Loop and Scan
// bodies), run on the scope each run gives; it keeps the state of its own
// nodes that hold subgraphs, so a nested loop's body is prepared once too.
class InterpretedBody : public PreparedSubgraph {
 public:
  static Result<std::unique_ptr<PreparedSubgraph>> prepare(
      const Graph& body, const KernelChooser& choose) {
    std::unique_ptr<InterpretedBody> prepared(
        new InterpretedBody(body, choose));
    SEQRT_ASSIGN_OR_RETURN(prepared->schedule_, schedule_graph(body));
    prepared->node_states_ = node_states(body);
    const OpRegistry& registry = OpRegistry::global();
    prepared->schemas_.resize(body.nodes.size(), nullptr);
    prepared->kernels_.resize(body.nodes.size());
    for (size_t i = 0; i < body.nodes.size(); ++i) {
      const Node& node = body.nodes[i];
      const OpSchema* schema = registry.find(node.domain, node.op);
      if (schema == nullptr) {
        return unsupported("{}: no such op in the registry", node.label());
      }
      prepared->schemas_[i] = schema;
      SEQRT_ASSIGN_OR_RETURN(prepared->kernels_[i], choose(node, *schema));
    }
    return std::unique_ptr<PreparedSubgraph>(std::move(prepared));
  }

  Result<std::vector<Tensor>> run(std::vector<Tensor> inputs,
                                  const SubgraphScope& scope,
                                  const ValuePlacer* place) const override {
    InterpretOptions options;
    options.schedule = &schedule_;
    options.kernels = &kernels_;
    options.schemas = &schemas_;
    options.prepare_subgraphs = true;
    options.node_states = &node_states_;
    if (place != nullptr) options.place_output = *place;
    return interpret_graph(body_, std::move(inputs), choose_, &scope, options);
  }

 private:
  InterpretedBody(const Graph& body, KernelChooser choose)
      : body_(body), choose_(std::move(choose)) {}

  const Graph& body_;
  KernelChooser choose_;  // a copy: the run that prepared it passes on
  Schedule schedule_;
  std::vector<const OpSchema*> schemas_;  // by node index
  std::vector<KernelFn> kernels_;         // by node index
  std::vector<std::shared_ptr<NodeStateCache>> node_states_;
};

}  // namespace

std::vector<std::shared_ptr<NodeStateCache>> node_states(const Graph& graph) {
  std::vector<std::shared_ptr<NodeStateCache>> states(graph.nodes.size());
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (graph.nodes[i].has_subgraphs()) {
      states[i] = std::make_shared<NodeStateCache>();
    }
  }
  return states;
}

Result<Schedule> schedule_graph(const Graph& graph) {
  Schedule schedule;
  SEQRT_ASSIGN_OR_RETURN(schedule.order, graph.topological_order());
  schedule.last_use = last_uses(graph, schedule.order);
  return schedule;
}

Result<std::vector<Tensor>> interpret_graph(
    const Graph& graph, std::vector<Tensor> inputs, const KernelChooser& choose,
    const std::map<std::string, Tensor>* outer,
    const InterpretOptions& options) {
  SEQRT_RETURN_IF_ERROR(check_graph_inputs(graph, inputs));
  Schedule computed;
  if (options.schedule == nullptr) {
    SEQRT_ASSIGN_OR_RETURN(computed, schedule_graph(graph));
  }
  const Schedule& schedule =
      options.schedule != nullptr ? *options.schedule : computed;
  const std::vector<int>& order = schedule.order;
  const std::vector<int>& last = schedule.last_use;
  const OpRegistry& registry = OpRegistry::global();

  std::vector<Tensor> env(graph.values.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    env[graph.inputs[i]] = std::move(inputs[i]);
  }
  for (const auto& [id, tensor] : graph.constants) env[id] = tensor;
  if (options.precomputed != nullptr) {
    // Shared with the plan: a kernel never takes them over, as the plan
    // keeps a handle (KernelContext::take_input needs the sole one).
    for (const auto& [id, tensor] : *options.precomputed) env[id] = tensor;
  }
  for (ValueId id : graph.captures) {
    auto it =
        outer ? outer->find(graph.value(id).name) : decltype(outer->end()){};
    if (outer == nullptr || it == outer->end()) {
      return invalid_model("graph '{}': captured value '{}' is not available",
                           graph.name, graph.value(id).name);
    }
    env[id] = it->second;
  }

  const RunControl* control = RunControl::current();
  const bool is_subgraph = outer != nullptr;
  OutputLimits limits(graph, control, is_subgraph);
  const Node* last_run = nullptr;
  // Drops the values whose last reader is `node`, at `pos` of the order.
  auto release_dead_inputs = [&](const Node& node, int pos) {
    for (ValueId id : node.inputs) {
      if (id != kNoValue && last[id] == pos) {
        env[id] = Tensor();
        limits.release(id);
      }
    }
  };
  for (size_t pos = 0; pos < order.size(); ++pos) {
    const Node& node = graph.nodes[order[pos]];
    if (control != nullptr && control->should_stop()) {
      return control->check_stop(stop_place(graph, last_run, is_subgraph));
    }
    last_run = &node;
    if (options.skipped_nodes != nullptr &&
        (*options.skipped_nodes)[order[pos]]) {
      release_dead_inputs(node, static_cast<int>(pos));
      continue;
    }
    const OpSchema* schema = options.schemas != nullptr
                                 ? (*options.schemas)[order[pos]]
                                 : registry.find(node.domain, node.op);
    if (schema == nullptr) {
      return unsupported("{}: no such op in the registry", node.label());
    }
    std::vector<const Tensor*> args;
    for (ValueId id : node.inputs) {
      args.push_back(id == kNoValue || env[id].empty() ? nullptr : &env[id]);
    }
    // The scope a subgraph sees is fixed while this node runs, so a Loop
    // or Scan body called once per iteration builds it only once.
    std::optional<std::map<std::string, Tensor>> scope;
    auto node_scope = [&]() -> const std::map<std::string, Tensor>& {
      if (!scope) {
        scope = outer ? *outer : std::map<std::string, Tensor>();
        for (size_t id = 0; id < env.size(); ++id) {
          if (!env[id].empty()) (*scope)[graph.values[id].name] = env[id];
        }
      }
      return *scope;
    };
    // Only nodes holding subgraphs get a runner: building one per node
    // would cost an allocation per node of every loop iteration.
    const bool holds_subgraphs = node.has_subgraphs();
    SubgraphRunner runner;
    if (holds_subgraphs) {
      runner = [&](const Graph& body, const std::vector<Tensor>& body_inputs) {
        InterpretOptions body_options;
        body_options.prepare_subgraphs = options.prepare_subgraphs;
        return interpret_graph(body, body_inputs, choose, &node_scope(),
                               body_options);
      };
    }
    KernelFn chosen;
    if (options.kernels == nullptr) {
      SEQRT_ASSIGN_OR_RETURN(chosen, choose(node, *schema));
    }
    const KernelFn& kernel =
        options.kernels != nullptr ? (*options.kernels)[order[pos]] : chosen;
    KernelContext ctx(node, *schema, std::move(args), runner);
    if (holds_subgraphs && options.prepare_subgraphs) {
      ctx.set_subgraph_preparer(
          [&](const Graph& body) {
            return InterpretedBody::prepare(body, choose);
          },
          node_scope);
      if (options.node_states != nullptr) {
        ctx.set_node_state((*options.node_states)[order[pos]].get());
      }
    }
    ctx.set_donations(donations(graph, node, last, static_cast<int>(pos), env));
    if (control != nullptr) {
      ctx.set_allocation_check(limits.before_allocation(node));
    }
    if (options.place_output) {
      ctx.set_output_placer(
          [&](size_t i, DType dtype, const std::vector<int64_t>& dims) {
            return node.outputs[i] == kNoValue
                       ? Tensor()
                       : options.place_output(node.outputs[i], dtype, dims);
          });
    }
    // Where the inputs start, before the kernel may take any over.
    std::vector<const void*> input_data;
    if (control != nullptr) {
      input_data.reserve(ctx.num_inputs());
      for (size_t k = 0; k < ctx.num_inputs(); ++k) {
        input_data.push_back(ctx.has_input(k) ? ctx.input(k)->data() : nullptr);
      }
    }
    if (options.profiler == nullptr) {
      Status ran = kernel(ctx);
      if (!ran.is_ok()) return kernel_error(node, ran);
    } else {
      auto start = std::chrono::steady_clock::now();
      Status ran = kernel(ctx);
      if (!ran.is_ok()) return kernel_error(node, ran);
      options.profiler->record(
          order[pos], std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::steady_clock::now() - start)
                          .count());
    }
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      if (node.outputs[i] == kNoValue) continue;
      SEQRT_RETURN_IF_ERROR(check_output(graph, node, i, ctx.outputs()[i]));
      SEQRT_RETURN_IF_ERROR(
          limits.after_kernel(graph, node, i, ctx.outputs()[i], input_data));
      if (options.adopt_output) {
        SEQRT_RETURN_IF_ERROR(
            options.adopt_output(node.outputs[i], ctx.outputs()[i]));
      }
      env[node.outputs[i]] = std::move(ctx.outputs()[i]);
    }
    release_dead_inputs(node, static_cast<int>(pos));
  }
  std::vector<Tensor> outputs;
  for (ValueId id : graph.outputs) outputs.push_back(env[id]);
  return outputs;
}

}  // namespace seqrt
