// Folds a loop a tracer wrote out (T copies of one step; unrolled_steps.h)
// back into one ONNX Scan, so that lift_scan_recurrences can lift it and,
// when it cannot, the loop executor runs one compiled body T times instead
// of T copies. The body is the step's nodes; it reads slice t of each
// sliced tensor as a scan input, the carried values as states, and values
// from before the loop as captures. Elementwise work the export did on
// whole sequences before the loop (exp(Δ·A) over every step, Δ·B·u) moves
// into the body when the loop only slices it, so the body holds the step's
// whole recurrence. See README.md.
#include <map>
#include <set>

#include <fmt/format.h>

#include "compiler/infer/infer_graph.h"
#include "compiler/passes/passes.h"
#include "compiler/passes/rewrite.h"
#include "compiler/passes/unrolled_steps.h"

namespace seqrt {
namespace {

// Loops folded per graph per run: each fold renumbers the graph, and a
// model has a few (one per layer).
constexpr int kMaxFolds = 64;
// How far elementwise producers of a sliced tensor move into the body.
constexpr int kMaxSinkDepth = 8;
// Small constants (axes, indices) are copied into the body, so that
// passes reading the body see them; larger ones are captured.
constexpr int64_t kMaxCopiedElements = 64;

bool is_sinkable_elementwise(const Node& node) {
  static const std::set<std::string> kOps = {
      "Exp", "Neg",  "Sigmoid",  "Tanh", "Softplus", "Relu", "Log", "Sqrt",
      "Abs", "Cast", "Identity", "Add",  "Sub",      "Mul",  "Div"};
  return node.domain.empty() && kOps.count(node.op) && node.outputs.size() == 1;
}

std::vector<Dim> without_axis(const Shape& shape, int64_t axis) {
  std::vector<Dim> dims = shape.dims();
  dims.erase(dims.begin() + axis);
  return dims;
}

class LoopFolder {
 public:
  LoopFolder(Graph& graph, const UnrolledLoop& loop)
      : graph_(graph),
        loop_(loop),
        producers_(graph.producers()),
        uses_(compute_uses(graph)) {
    for (const std::vector<int>& seeds : loop.seeds) {
      seeds_.insert(seeds.begin(), seeds.end());
    }
    body_ = std::make_shared<Graph>();
    body_->name = fmt::format("{}_step", step_name());
  }

  Status fold();
  std::string scan_name() const { return step_name() + "_scan"; }

 private:
  // After the scope of the step's first node ("/model/layers.0/mixer/").
  std::string step_name() const {
    const std::string& first = graph_.nodes[loop_.step_nodes.front()].name;
    return first.substr(0, first.rfind('/') + 1) + "unrolled";
  }
  ValueId body_value(const std::string& base, DType dtype,
                     std::optional<Shape> shape) {
    std::string name = base + "/step";
    for (int i = 1; body_->find_value(name) != kNoValue; ++i) {
      name = fmt::format("{}/step{}", base, i);
    }
    return body_->add_value(Value{name, dtype, std::move(shape)});
  }
  bool only_feeds_loop(ValueId value, int depth) const;
  bool sinkable(const Node& node) const;
  ValueId capture(ValueId outer);
  ValueId loop_invariant(ValueId outer, int64_t squeeze_axis);
  ValueId slice_of(ValueId source, int64_t axis, int depth);
  ValueId scan_input(ValueId source, int64_t axis);
  ValueId outer_op(const std::string& op, std::vector<ValueId> inputs,
                   AttrMap attrs, ValueId output = kNoValue);
  ValueId ints(const std::string& base, const std::vector<int64_t>& values);
  void drop_unused_body_nodes();

  Graph& graph_;
  const UnrolledLoop& loop_;
  std::vector<int> producers_;
  ValueUses uses_;
  std::set<int> seeds_;
  std::shared_ptr<Graph> body_;
  std::map<ValueId, ValueId> body_of_;  // outer/template value -> body value
  std::map<std::pair<ValueId, int64_t>, ValueId> slices_;
  std::vector<ValueId> scan_inputs_;       // outer, time-major
  std::vector<ValueId> scan_body_inputs_;  // body
  std::vector<Node> added_;
};

ValueId LoopFolder::outer_op(const std::string& op, std::vector<ValueId> inputs,
                             AttrMap attrs, ValueId output) {
  const std::string name =
      fmt::format("{}_fold_{}", step_name(), added_.size());
  if (output == kNoValue) output = add_fresh_value(graph_, name);
  Node node{name, op, kOnnxDomain, std::move(inputs), {output}};
  node.attrs = std::move(attrs);
  added_.push_back(std::move(node));
  return output;
}

ValueId LoopFolder::ints(const std::string& base,
                         const std::vector<int64_t>& values) {
  ValueId id = add_fresh_value(graph_, base);
  Tensor t = Tensor::from_vector<int64_t>({static_cast<int64_t>(values.size())},
                                          values);
  graph_.value(id).dtype = t.dtype();
  graph_.value(id).shape = t.shape();
  graph_.constants[id] = t;
  return id;
}

bool LoopFolder::sinkable(const Node& node) const {
  return is_sinkable_elementwise(node) ||
         (node.op == "Unsqueeze" && node.domain.empty() &&
          node.inputs.size() == 2 && graph_.constant(node.inputs[1]) &&
          node.outputs.size() == 1);
}

// Whether only the loop reads `value`: its Gathers, or nodes that move
// into the body and whose values only the loop reads. Work that something
// else also reads stays outside, done once.
bool LoopFolder::only_feeds_loop(ValueId value, int depth) const {
  if (uses_.is_output[value] || depth > kMaxSinkDepth) return false;
  for (int reader : uses_.consumers[value]) {
    if (seeds_.count(reader)) continue;
    const Node& node = graph_.nodes[reader];
    if (!sinkable(node) || !only_feeds_loop(node.outputs[0], depth + 1)) {
      return false;
    }
  }
  return true;
}

ValueId LoopFolder::capture(ValueId outer) {
  auto it = body_of_.find(outer);
  if (it != body_of_.end()) return it->second;
  const Value& v = graph_.value(outer);
  const Tensor* constant = graph_.constant(outer);
  ValueId id = kNoValue;
  if (constant != nullptr && constant->num_elements() <= kMaxCopiedElements) {
    id = body_value(v.name, v.dtype, v.shape);
    body_->constants[id] = *constant;
  } else {
    id = body_->add_value(Value{v.name, v.dtype, v.shape});
    body_->captures.push_back(id);
  }
  body_of_[outer] = id;
  return id;
}

// `outer`, or it with `squeeze_axis` (of size 1) dropped when >= 0, read by
// every step.
ValueId LoopFolder::loop_invariant(ValueId outer, int64_t squeeze_axis) {
  if (squeeze_axis < 0) return capture(outer);
  const Value v = graph_.value(outer);  // a copy: values grow below
  if (const Tensor* tensor = graph_.constant(outer)) {
    std::vector<int64_t> dims = tensor->dims();
    dims.erase(dims.begin() + squeeze_axis);
    Result<Tensor> squeezed = tensor->reshaped(dims);
    if (squeezed.is_ok()) {
      ValueId id = add_fresh_value(graph_, v.name + "_per_step");
      graph_.value(id).dtype = v.dtype;
      graph_.value(id).shape = Shape::from_dims(dims);
      graph_.constants[id] = *squeezed;
      return capture(id);
    }
  }
  ValueId squeezed =
      outer_op("Squeeze", {outer, ints(v.name + "_axes", {squeeze_axis})}, {});
  graph_.value(squeezed).dtype = v.dtype;
  graph_.value(squeezed).shape = Shape(without_axis(*v.shape, squeeze_axis));
  return capture(squeezed);
}

// Slice t of `source` along `axis` (a tensor computed before the loop),
// as a body value: computed in the body from slices of its operands when
// `source` is elementwise, else read as a scan input.
ValueId LoopFolder::slice_of(ValueId source, int64_t axis, int depth) {
  auto key = std::make_pair(source, axis);
  auto memo = slices_.find(key);
  if (memo != slices_.end()) return memo->second;
  const Value value = graph_.value(source);  // a copy: values grow below
  const int producer = producers_[source];
  ValueId result = kNoValue;
  if (producer >= 0 && depth < kMaxSinkDepth && value.shape &&
      only_feeds_loop(source, 0)) {
    const Node& node = graph_.nodes[producer];
    const Dim steps = (*value.shape)[axis];
    const int64_t rank = static_cast<int64_t>(value.shape->rank());
    std::vector<ValueId> operands;
    AttrMap attrs = node.attrs;
    bool sinkable = false;
    if (is_sinkable_elementwise(node)) {
      // Per operand, as broadcasting aligns it: sliced, squeezed or whole.
      std::vector<std::pair<int64_t, int>>
          plan;  // (its axis, 0 slice/1 squeeze/2 whole)
      sinkable = true;
      for (ValueId in : node.inputs) {
        const std::optional<Shape>& s = graph_.value(in).shape;
        if (!s) {
          sinkable = false;
          break;
        }
        const int64_t a = axis - (rank - static_cast<int64_t>(s->rank()));
        if (a < 0) {
          plan.push_back({a, 2});
        } else if ((*s)[a] == steps) {
          plan.push_back({a, 0});
        } else if ((*s)[a] == Dim(1)) {
          plan.push_back({a, 1});
        } else {
          sinkable = false;
          break;
        }
      }
      for (size_t i = 0; sinkable && i < node.inputs.size(); ++i) {
        const auto [a, how] = plan[i];
        operands.push_back(how == 0   ? slice_of(node.inputs[i], a, depth + 1)
                           : how == 1 ? loop_invariant(node.inputs[i], a)
                                      : loop_invariant(node.inputs[i], -1));
      }
    } else if (node.op == "Unsqueeze" && node.domain.empty() &&
               node.inputs.size() == 2 && graph_.constant(node.inputs[1])) {
      const Tensor& axes = *graph_.constant(node.inputs[1]);
      std::vector<int64_t> moved;
      int64_t before = 0;
      sinkable = true;
      for (int64_t i = 0; i < axes.num_elements(); ++i) {
        int64_t a = axes.element_i64(i);
        if (a < 0) a += rank;
        if (a == axis) sinkable = false;
        if (a < axis) ++before;
        moved.push_back(a > axis ? a - 1 : a);
      }
      if (sinkable) {
        operands.push_back(slice_of(node.inputs[0], axis - before, depth + 1));
        const Tensor t = Tensor::from_vector<int64_t>(
            {static_cast<int64_t>(moved.size())}, moved);
        ValueId axes_id =
            body_value(graph_.value(node.inputs[1]).name, t.dtype(), t.shape());
        body_->constants[axes_id] = t;
        operands.push_back(axes_id);
      }
    }
    if (sinkable) {
      result = body_value(value.name, value.dtype,
                          Shape(without_axis(*value.shape, axis)));
      Node copy{node.name.empty() ? "" : node.name + "/step",
                node.op,
                node.domain,
                operands,
                {result}};
      copy.attrs = std::move(attrs);
      body_->nodes.push_back(std::move(copy));
    }
  }
  if (result == kNoValue) result = scan_input(source, axis);
  slices_[key] = result;
  return result;
}

// `source` with its first `steps` slices along `axis`, time-major, as a
// scan input; the body's input for slice t.
ValueId LoopFolder::scan_input(ValueId source, int64_t axis) {
  const Value value = graph_.value(source);  // a copy: values grow below
  const int64_t rank = static_cast<int64_t>(value.shape->rank());
  ValueId outer = source;
  if ((*value.shape)[axis] != Dim(loop_.steps)) {
    outer = outer_op("Slice",
                     {outer, ints(value.name + "_start", {0}),
                      ints(value.name + "_end", {loop_.steps}),
                      ints(value.name + "_axis", {axis})},
                     {});
  }
  if (axis != 0) {
    std::vector<int64_t> perm = {axis};
    for (int64_t a = 0; a < rank; ++a) {
      if (a != axis) perm.push_back(a);
    }
    outer = outer_op("Transpose", {outer}, {{"perm", Attribute(perm)}});
  }
  scan_inputs_.push_back(outer);
  ValueId in = body_value(value.name, value.dtype,
                          Shape(without_axis(*value.shape, axis)));
  scan_body_inputs_.push_back(in);
  return in;
}

void LoopFolder::drop_unused_body_nodes() {
  for (bool changed = true; changed;) {
    changed = false;
    std::set<ValueId> read(body_->outputs.begin(), body_->outputs.end());
    for (const Node& node : body_->nodes) {
      read.insert(node.inputs.begin(), node.inputs.end());
    }
    for (size_t n = body_->nodes.size(); n-- > 0;) {
      const Node& node = body_->nodes[n];
      bool used = false;
      for (ValueId id : node.outputs) used = used || read.count(id);
      if (!used) {
        body_->nodes.erase(body_->nodes.begin() + n);
        changed = true;
      }
    }
  }
}

Status LoopFolder::fold() {
  // States first: what step 1 reads of step 0.
  std::vector<ValueId> states;
  for (const Carry& carry : loop_.carries) {
    const Value& v = graph_.value(carry.read);
    ValueId id = body_value(v.name, v.dtype, v.shape);
    body_of_[carry.read] = id;
    states.push_back(id);
  }
  for (size_t s = 0; s < loop_.sources.size(); ++s) {
    const Node& seed = graph_.nodes[loop_.seeds[s][1]];
    body_of_[seed.outputs[0]] =
        slice_of(loop_.sources[s].source, loop_.sources[s].axis, 0);
  }
  for (int n : loop_.step_nodes) {
    Node copy = graph_.nodes[n];
    for (ValueId& in : copy.inputs) {
      if (in == kNoValue) continue;
      auto it = body_of_.find(in);
      in = it != body_of_.end() ? it->second : capture(in);
    }
    for (ValueId& out : copy.outputs) {
      if (out == kNoValue) continue;
      const Value& v = graph_.value(out);
      ValueId id = body_value(v.name, v.dtype, v.shape);
      body_of_[out] = id;
      out = id;
    }
    body_->nodes.push_back(std::move(copy));
  }
  body_->inputs = states;
  body_->inputs.insert(body_->inputs.end(), scan_body_inputs_.begin(),
                       scan_body_inputs_.end());
  for (const Carry& carry : loop_.carries) {
    body_->outputs.push_back(body_of_.at(carry.carried));
  }
  // A stacked Unsqueeze(v, axis) stacks v itself: the body leaves it out.
  std::vector<std::pair<ValueId, bool>> stacked_values;  // (template, squeezed)
  for (const StackedOutput& stack : loop_.stacked) {
    ValueId v = stack.value;
    bool squeezed = false;
    const int p = producers_[v];
    const Node* unsqueeze = p >= 0 ? &graph_.nodes[p] : nullptr;
    if (unsqueeze != nullptr && unsqueeze->op == "Unsqueeze" &&
        unsqueeze->inputs.size() == 2 && body_of_.count(unsqueeze->inputs[0])) {
      const Tensor* axes = graph_.constant(unsqueeze->inputs[1]);
      const int64_t rank = static_cast<int64_t>(graph_.value(v).shape->rank());
      if (axes != nullptr && axes->num_elements() == 1 &&
          (axes->element_i64(0) + rank) % rank == stack.axis) {
        v = unsqueeze->inputs[0];
        squeezed = true;
      }
    }
    body_->outputs.push_back(body_of_.at(v));
    stacked_values.emplace_back(v, squeezed);
  }
  drop_unused_body_nodes();

  std::vector<ValueId> inputs;
  for (const Carry& carry : loop_.carries) inputs.push_back(carry.initial);
  inputs.insert(inputs.end(), scan_inputs_.begin(), scan_inputs_.end());
  std::vector<ValueId> outputs;
  for (size_t s = 0; s < loop_.carries.size(); ++s) {
    outputs.push_back(loop_.finals[s] != kNoValue
                          ? loop_.finals[s]
                          : add_fresh_value(graph_, step_name() + "_final"));
  }
  std::vector<std::pair<ValueId, const StackedOutput*>> to_stack;
  for (size_t i = 0; i < loop_.stacked.size(); ++i) {
    ValueId out = add_fresh_value(graph_, step_name() + "_steps");
    outputs.push_back(out);
    to_stack.emplace_back(out, &loop_.stacked[i]);
  }
  Node scan{scan_name(), "Scan", kOnnxDomain, inputs, outputs};
  scan.attrs = {{"body", Attribute(body_)},
                {"num_scan_inputs",
                 Attribute(static_cast<int64_t>(scan_inputs_.size()))}};
  added_.push_back(std::move(scan));
  // (T, …) back to the Concat's layout: the step axis where it stacked.
  for (size_t i = 0; i < to_stack.size(); ++i) {
    const StackedOutput& stack = *to_stack[i].second;
    ValueId steps = to_stack[i].first;
    const int64_t rank =
        static_cast<int64_t>(graph_.value(stack.value).shape->rank());
    if (!stacked_values[i].second) {
      steps = outer_op("Squeeze", {steps, ints("stack_axes", {stack.axis + 1})},
                       {});
    }
    std::vector<int64_t> perm;
    for (int64_t a = 0; a < rank; ++a) {
      perm.push_back(a < stack.axis ? a + 1 : a == stack.axis ? 0 : a);
    }
    outer_op("Transpose", {steps}, {{"perm", Attribute(perm)}}, stack.stacked);
  }
  std::set<int> removed(loop_.all_nodes.begin(), loop_.all_nodes.end());
  for (const std::vector<int>& seeds : loop_.seeds) {
    removed.insert(seeds.begin(), seeds.end());
  }
  return replace_nodes(graph_, removed, std::move(added_));
}

Result<bool> fold_loops(Graph& graph, PassNotes& notes) {
  SEQRT_ASSIGN_OR_RETURN(bool changed,
                         rewrite_subgraphs(graph, [&](Graph& sub) {
                           return fold_loops(sub, notes);
                         }));
  for (int folds = 0; folds < kMaxFolds; ++folds) {
    std::optional<UnrolledLoop> loop = find_unrolled_loop(graph);
    if (!loop) break;
    const size_t nodes = loop->all_nodes.size();
    LoopFolder folder(graph, *loop);
    const std::string name = folder.scan_name();
    SEQRT_RETURN_IF_ERROR(folder.fold());
    SEQRT_RETURN_IF_ERROR(infer_graph(graph));
    notes.push_back(fmt::format(
        "{} copies of a step ({} nodes) -> Scan '{}' ({} states, {} "
        "stacked outputs)",
        loop->steps, nodes, name, loop->carries.size(), loop->stacked.size()));
    changed = true;
  }
  return changed;
}

}  // namespace

Pass fold_unrolled_loops_pass() {
  Pass pass;
  pass.name = "fold_unrolled_loops";
  pass.run = [](Graph& graph) {
    PassNotes notes;
    return fold_loops(graph, notes);
  };
  pass.run_noting = fold_loops;
  return pass;
}

}  // namespace seqrt
