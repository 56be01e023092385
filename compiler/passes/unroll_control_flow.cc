// If, Scan and Loop written out (unroll_control_flow.h). Each copy of a
// branch or body comes from SubgraphInliner; a Scan's slices are Gathers
// of one index along the scan axis, its per-step outputs Unsqueezed and
// Concatenated in step order (reversed for the reverse directions); the
// node's outputs are the last copy's, through Identity where a copy's value
// has another name.
#include "compiler/passes/unroll_control_flow.h"

#include <set>
#include <vector>

#include "compiler/passes/inline_subgraph.h"
#include "compiler/passes/rewrite.h"

namespace seqrt {
namespace {

// Passes of unroll_control_flow: control flow nested this deep inside
// branches and bodies comes up and is written out too.
constexpr int kMaxDepth = 8;

const Graph* graph_attr(const Node& node, const std::string& name) {
  const Attribute* attr = node.attr(name);
  if (attr == nullptr || attr->type() != AttrType::kGraph) return nullptr;
  return attr->as_graph().get();
}

std::vector<int64_t> ints_attr(const Node& node, const std::string& name,
                               size_t count, int64_t fill) {
  const Attribute* attr = node.attr(name);
  if (attr == nullptr || attr->type() != AttrType::kInts) {
    return std::vector<int64_t>(count, fill);
  }
  return attr->as_ints();
}

// A scalar (one element) known at compile: a constant of `graph`, or the
// `value` of the Constant node that produces it; else nullptr.
const Tensor* constant_scalar(const Graph& graph, ValueId id) {
  if (id == kNoValue) return nullptr;
  const Tensor* t = graph.constant(id);
  for (size_t i = 0; t == nullptr && i < graph.nodes.size(); ++i) {
    const Node& node = graph.nodes[i];
    const Attribute* value = node.attr("value");
    if (node.op == "Constant" && node.outputs.size() == 1 &&
        node.outputs[0] == id && value != nullptr &&
        value->type() == AttrType::kTensor) {
      t = &value->as_tensor();
    }
  }
  return t != nullptr && t->num_elements() == 1 ? t : nullptr;
}

// The length of `dim` at compile time, or -1.
int64_t static_size(const Dim& dim, const UnrollOptions& options) {
  if (dim.is_fixed()) return dim.value();
  if (dim.is_symbol()) {
    auto bound = options.dim_bindings.find(dim.symbol_name());
    if (bound != options.dim_bindings.end()) return bound->second;
  }
  return -1;
}

// Scan's counts and per-input/per-output attributes, normalised.
struct ScanLayout {
  size_t states = 0, scan_inputs = 0, scan_outputs = 0;
  std::vector<int64_t> input_axes, input_directions;
  std::vector<int64_t> output_axes, output_directions;
  int64_t steps = -1;
};

// The layout, or the reason it cannot be written out in `why`.
ScanLayout scan_layout(const Graph& graph, const Node& node,
                       const UnrollOptions& options, std::string& why) {
  ScanLayout s;
  const Attribute* m = node.attr("num_scan_inputs");
  if (m == nullptr || m->type() != AttrType::kInt || m->as_int() < 1 ||
      static_cast<size_t>(m->as_int()) > node.inputs.size()) {
    why = "its num_scan_inputs is missing or out of range";
    return s;
  }
  s.scan_inputs = static_cast<size_t>(m->as_int());
  s.states = node.inputs.size() - s.scan_inputs;
  if (node.outputs.size() < s.states) {
    why = "it has fewer outputs than state variables";
    return s;
  }
  s.scan_outputs = node.outputs.size() - s.states;
  s.input_axes = ints_attr(node, "scan_input_axes", s.scan_inputs, 0);
  s.input_directions =
      ints_attr(node, "scan_input_directions", s.scan_inputs, 0);
  s.output_axes = ints_attr(node, "scan_output_axes", s.scan_outputs, 0);
  s.output_directions =
      ints_attr(node, "scan_output_directions", s.scan_outputs, 0);
  for (size_t j = 0; j < s.scan_inputs; ++j) {
    const Value& input = graph.value(node.inputs[s.states + j]);
    if (!input.shape.has_value()) {
      why = "the rank of scan input '" + input.name + "' is not known";
      return s;
    }
    const auto rank = static_cast<int64_t>(input.shape->rank());
    int64_t& axis = s.input_axes[j];
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) {
      why = "a scan input axis is out of range";
      return s;
    }
    const Dim& dim = (*input.shape)[static_cast<size_t>(axis)];
    const int64_t length = static_size(dim, options);
    if (length < 0) {
      why = "the length of scan input '" + input.name +
            "' is known only at run time" +
            (dim.is_symbol()
                 ? " (dim '" + dim.symbol_name() + "': bind it at compile)"
                 : "");
      return s;
    }
    s.steps = length;
  }
  for (size_t k = 0; k < s.scan_outputs; ++k) {
    ValueId id = node.outputs[s.states + k];
    const Value* out = id == kNoValue ? nullptr : &graph.value(id);
    if (out == nullptr || !out->shape.has_value()) {
      why = "the rank of a scan output is not known";
      return s;
    }
    const auto rank = static_cast<int64_t>(out->shape->rank());
    int64_t& axis = s.output_axes[k];
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) {
      why = "a scan output axis is out of range";
      return s;
    }
  }
  return s;
}

// A Loop's trip count when it can be written out, else -1 with `why`.
int64_t loop_trips(const Graph& graph, const Node& node, std::string& why) {
  const Graph* body = graph_attr(node, "body");
  const Tensor* trips =
      node.inputs.empty() ? nullptr : constant_scalar(graph, node.inputs[0]);
  if (trips == nullptr) {
    why = "its trip count is not a constant";
    return -1;
  }
  if (node.inputs.size() > 1 && node.inputs[1] != kNoValue) {
    const Tensor* cond = constant_scalar(graph, node.inputs[1]);
    if (cond == nullptr || cond->element_i64(0) == 0) {
      why = "its initial condition is not a constant true";
      return -1;
    }
  }
  // The body must hand its condition on unchanged (or as a constant true):
  // then only the trip count ends the loop.
  if (body->inputs.size() < 2 || body->outputs.empty()) {
    why = "its body lacks the iteration and condition inputs";
    return -1;
  }
  const ValueId cond_out = body->outputs[0];
  const Tensor* fixed = constant_scalar(*body, cond_out);
  bool passes_on = cond_out == body->inputs[1] ||
                   (fixed != nullptr && fixed->element_i64(0) != 0);
  for (const Node& inner : body->nodes) {
    if (inner.op == "Identity" && inner.outputs.size() == 1 &&
        inner.outputs[0] == cond_out && inner.inputs.size() == 1 &&
        inner.inputs[0] == body->inputs[1]) {
      passes_on = true;
    }
  }
  if (!passes_on) {
    why = "its body computes the condition at run time";
    return -1;
  }
  return trips->element_i64(0);
}

class Unroller : public NodeWriter {
 public:
  Unroller(Graph& graph, const Node& node, const UnrollOptions& options)
      : NodeWriter(graph, node.name.empty() ? node.op : node.name),
        node_(node),
        options_(options) {}

  Status run() {
    if (node_.op == "If") return unroll_if();
    if (node_.op == "Scan") return unroll_scan();
    return unroll_loop();
  }

 private:
  ValueId constant(const std::string& what, Tensor tensor) {
    ValueId id = fresh(what);
    graph_.value(id).dtype = tensor.dtype();
    graph_.value(id).shape = Shape::from_dims(tensor.dims());
    graph_.constants[id] = std::move(tensor);
    return id;
  }

  // The i64 scalar `value`, one constant per value.
  ValueId index(int64_t value) {
    auto it = indices_.find(value);
    if (it != indices_.end()) return it->second;
    ValueId id = constant("step" + std::to_string(value),
                          Tensor::scalar<int64_t>(value));
    indices_[value] = id;
    return id;
  }

  // The node's output `out` (if requested) is `value`.
  void bind_output(ValueId out, ValueId value) {
    if (out != kNoValue) emit("Identity", {value}, out);
  }

  // `parts` (in order) stacked along a new axis `axis` into `out`.
  void stack(const std::vector<ValueId>& parts, int64_t axis, ValueId out) {
    if (out == kNoValue) return;
    ValueId axes =
        constant("stack_axes", Tensor::from_vector<int64_t>({1}, {axis}));
    std::vector<ValueId> lifted;
    for (ValueId part : parts) {
      ValueId one = parts.size() == 1 ? out : fresh("stacked_step");
      emit("Unsqueeze", {part, axes}, one);
      lifted.push_back(one);
    }
    if (parts.size() > 1) emit("Concat", lifted, out, {{"axis", axis}});
  }

  Status unroll_if() {
    const bool cond =
        constant_scalar(graph_, node_.inputs[0])->element_i64(0) != 0;
    const Graph& branch =
        *graph_attr(node_, cond ? "then_branch" : "else_branch");
    SubgraphInliner inliner(graph_, branch, base_);
    std::vector<ValueId> results =
        inliner.inline_copy({}, cond ? "then_" : "else_", nodes_);
    for (size_t i = 0; i < node_.outputs.size(); ++i) {
      bind_output(node_.outputs[i], results[i]);
    }
    return Status::ok();
  }

  Status unroll_scan() {
    std::string why;
    const ScanLayout s = scan_layout(graph_, node_, options_, why);
    const Graph& body = *graph_attr(node_, "body");
    SubgraphInliner inliner(graph_, body, base_);
    std::vector<ValueId> states(node_.inputs.begin(),
                                node_.inputs.begin() + s.states);
    std::vector<std::vector<ValueId>> per_step(
        s.scan_outputs, std::vector<ValueId>(s.steps, kNoValue));
    for (int64_t t = 0; t < s.steps; ++t) {
      std::vector<ValueId> inputs = states;
      for (size_t j = 0; j < s.scan_inputs; ++j) {
        const int64_t at = s.input_directions[j] == 1 ? s.steps - 1 - t : t;
        ValueId slice =
            fresh("slice" + std::to_string(j) + "_" + std::to_string(at));
        emit("Gather", {node_.inputs[s.states + j], index(at)}, slice,
             {{"axis", s.input_axes[j]}});
        inputs.push_back(slice);
      }
      std::vector<ValueId> results =
          inliner.inline_copy(inputs, "step" + std::to_string(t) + "_", nodes_);
      states.assign(results.begin(), results.begin() + s.states);
      for (size_t k = 0; k < s.scan_outputs; ++k) {
        const int64_t at = s.output_directions[k] == 1 ? s.steps - 1 - t : t;
        per_step[k][at] = results[s.states + k];
      }
    }
    for (size_t i = 0; i < s.states; ++i) {
      bind_output(node_.outputs[i], states[i]);
    }
    for (size_t k = 0; k < s.scan_outputs; ++k) {
      stack(per_step[k], s.output_axes[k], node_.outputs[s.states + k]);
    }
    return Status::ok();
  }

  Status unroll_loop() {
    std::string why;
    const int64_t trips = loop_trips(graph_, node_, why);
    const Graph& body = *graph_attr(node_, "body");
    const size_t carried = node_.inputs.size() - 2;
    const size_t scanned = body.outputs.size() - 1 - carried;
    SubgraphInliner inliner(graph_, body, base_);
    const ValueId keep_going =
        constant("condition", Tensor::scalar<bool>(true));
    std::vector<ValueId> values(node_.inputs.begin() + 2, node_.inputs.end());
    std::vector<std::vector<ValueId>> per_step(scanned);
    for (int64_t i = 0; i < trips; ++i) {
      std::vector<ValueId> inputs = {index(i), keep_going};
      inputs.insert(inputs.end(), values.begin(), values.end());
      std::vector<ValueId> results =
          inliner.inline_copy(inputs, "iter" + std::to_string(i) + "_", nodes_);
      values.assign(results.begin() + 1, results.begin() + 1 + carried);
      for (size_t k = 0; k < scanned; ++k) {
        per_step[k].push_back(results[1 + carried + k]);
      }
    }
    for (size_t i = 0; i < carried; ++i) {
      bind_output(node_.outputs[i], values[i]);
    }
    for (size_t k = 0; k < scanned; ++k) {
      stack(per_step[k], 0, node_.outputs[carried + k]);
    }
    return Status::ok();
  }

  const Node& node_;
  const UnrollOptions& options_;
  std::map<int64_t, ValueId> indices_;
};

}  // namespace

bool is_control_flow(const Node& node) {
  return node.domain == kOnnxDomain &&
         (node.op == "If" || node.op == "Scan" || node.op == "Loop");
}

std::string unroll_blocker(const Graph& graph, const Node& node,
                           const UnrollOptions& options) {
  std::vector<const Graph*> bodies;
  int64_t copies = 1;
  if (node.op == "If") {
    const Tensor* cond =
        node.inputs.empty() ? nullptr : constant_scalar(graph, node.inputs[0]);
    if (cond == nullptr) {
      return "its condition is computed at run time; only an If whose "
             "condition is known at compile is written out as its branch";
    }
    const Graph* branch = graph_attr(
        node, cond->element_i64(0) != 0 ? "then_branch" : "else_branch");
    if (branch == nullptr || branch->outputs.size() != node.outputs.size()) {
      return "its branch is missing or has another number of outputs";
    }
    bodies.push_back(branch);
  } else if (node.op == "Scan") {
    const Graph* body = graph_attr(node, "body");
    if (body == nullptr) return "it has no body";
    std::string why;
    ScanLayout s = scan_layout(graph, node, options, why);
    if (!why.empty()) return why;
    if (body->inputs.size() != s.states + s.scan_inputs ||
        body->outputs.size() != s.states + s.scan_outputs) {
      return "its body's inputs or outputs do not match the node's";
    }
    if (s.steps <= 0) return "it runs no step";
    copies = s.steps;
    bodies.push_back(body);
  } else if (node.op == "Loop") {
    const Graph* body = graph_attr(node, "body");
    if (body == nullptr) return "it has no body";
    if (node.inputs.size() < 2) return "it has no trip count or condition";
    std::string why;
    const int64_t trips = loop_trips(graph, node, why);
    if (trips < 0) return why;
    if (trips == 0) return "it runs no iteration";
    const size_t carried = node.inputs.size() - 2;
    if (body->inputs.size() != carried + 2 ||
        body->outputs.size() < carried + 1 ||
        node.outputs.size() != body->outputs.size() - 1) {
      return "its body's inputs or outputs do not match the node's";
    }
    copies = trips;
    bodies.push_back(body);
  } else {
    return "it is not If, Scan or Loop";
  }
  for (const Graph* body : bodies) {
    const std::string blocker = inline_blocker(graph, *body);
    if (!blocker.empty()) return "its body: " + blocker;
    const auto nodes = static_cast<int64_t>(body->nodes.size()) + 4;
    if (copies > options.max_nodes / nodes) {
      return "written out it would take " + std::to_string(copies) +
             " copies of " + std::to_string(body->nodes.size()) +
             " body nodes, over the limit of " +
             std::to_string(options.max_nodes) + " nodes";
    }
  }
  return "";
}

Result<bool> unroll_control_flow(Graph& graph, const UnrollOptions& options) {
  bool changed = false;
  for (int depth = 0; depth < kMaxDepth; ++depth) {
    std::set<int> unrolled;
    std::vector<Node> added;
    for (size_t i = 0; i < graph.nodes.size(); ++i) {
      const Node& node = graph.nodes[i];
      if (!is_control_flow(node) ||
          (options.keep && options.keep(graph, node)) ||
          !unroll_blocker(graph, node, options).empty()) {
        continue;
      }
      Unroller unroller(graph, node, options);
      SEQRT_RETURN_IF_ERROR(unroller.run());
      for (Node& n : unroller.take_nodes()) added.push_back(std::move(n));
      unrolled.insert(static_cast<int>(i));
    }
    if (unrolled.empty()) break;
    SEQRT_RETURN_IF_ERROR(replace_nodes(graph, unrolled, std::move(added)));
    changed = true;
  }
  return changed;
}

}  // namespace seqrt
