// Rewrites a Loop that always runs its trip count and reads each
// iteration's slice of outer tensors with Gather(X, iteration, axis 0) into
// the equivalent Scan over those tensors, so that lift_scan_recurrences
// (which reads Scan bodies) sees recurrences written as Loops too. Any
// other Loop stays as it is, with the reason in the pass's notes. See
// README.md.
#include <algorithm>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "compiler/passes/passes.h"
#include "compiler/passes/rewrite.h"

namespace seqrt {
namespace {

// A one-element constant of `graph`, or null.
const Tensor* one_element(const Graph& graph, ValueId id) {
  const Tensor* tensor = graph.constant(id);
  return tensor != nullptr && tensor->num_elements() == 1 ? tensor : nullptr;
}

bool is_captured(const Graph& body, ValueId id) {
  for (ValueId capture : body.captures) {
    if (capture == id) return true;
  }
  return false;
}

// True when `id` is a constant true of the body, or a capture of one of the
// graph around it.
bool is_constant_true(const Graph& outer, const Graph& body, ValueId id) {
  const Tensor* tensor = one_element(body, id);
  if (tensor == nullptr && is_captured(body, id)) {
    ValueId outer_id = outer.find_value(body.value(id).name);
    if (outer_id != kNoValue) tensor = one_element(outer, outer_id);
  }
  return tensor != nullptr && tensor->dtype() == DType::kBool &&
         tensor->element_i64(0) != 0;
}

size_t count_of(const std::vector<ValueId>& ids, ValueId id) {
  return static_cast<size_t>(std::count(ids.begin(), ids.end(), id));
}

// How one sliced tensor X enters the Scan.
enum class Cut {
  kNone,   // X's dim 0 is the constant trip count: X as it is
  kSlice,  // X longer than the constant trip count: Slice X[:M]
  kRange,  // otherwise Gather(X, Range(0, M)): X[:M], failing as the Loop's
           // Gather does when M passes X's length
};

// What the rewrite of one Loop needs, found by plan_loop().
struct LoopPlan {
  size_t num_carried = 0;
  std::vector<int> gathers;     // body nodes Gather(X, iteration)
  std::vector<ValueId> sliced;  // per gather: X in the outer graph
  std::vector<Cut> cuts;        // per gather
  int cond_identity = -1;       // body node Identity(cond in) -> cond out
  int64_t trips = -1;           // the trip count when constant
};

// Checks the body's condition output: the condition input handed on (as
// it is or through one Identity) or a constant true, read by nothing else.
std::optional<std::string> plan_cond(const Graph& outer, const Graph& body,
                                     const ValueUses& uses, LoopPlan& plan) {
  const ValueId cond_in = body.inputs[1], cond_out = body.outputs[0];
  if (count_of(body.outputs, cond_out) != 1 ||
      (cond_out != cond_in && !uses.consumers[cond_out].empty())) {
    return "its body reads its condition output";
  }
  if (cond_out != cond_in && !is_constant_true(outer, body, cond_out)) {
    const int producer = uses.producer[cond_out];
    const Node* node = producer < 0 ? nullptr : &body.nodes[producer];
    if (node == nullptr || node->op != "Identity" || node->inputs.size() != 1 ||
        node->inputs[0] != cond_in) {
      return "its body computes the condition";
    }
    plan.cond_identity = producer;
  }
  const size_t readers = uses.consumers[cond_in].size();
  if (count_of(body.outputs, cond_in) > (cond_out == cond_in ? 1 : 0) ||
      readers > (plan.cond_identity >= 0 ? 1 : 0)) {
    return "its body reads the condition";
  }
  return std::nullopt;
}

// Checks that the iteration number is read only by Gather(X, iteration,
// axis 0) of captured values X, and how each X is cut to the trip count.
std::optional<std::string> plan_gathers(const Graph& outer, const Graph& body,
                                        const ValueUses& uses, LoopPlan& plan) {
  const ValueId iteration = body.inputs[0];
  if (count_of(body.outputs, iteration) != 0) {
    return "its body gives out the iteration number";
  }
  for (int n : uses.consumers[iteration]) {
    const Node& node = body.nodes[n];
    if (node.op != "Gather" || !node.domain.empty() ||
        node.inputs.size() != 2 || node.inputs[1] != iteration ||
        node.inputs[0] == iteration) {
      return fmt::format("the iteration number is read by {}", node.label());
    }
    const Attribute* axis = node.attr("axis");
    if (axis != nullptr && axis->as_int() != 0) {
      return fmt::format("{} slices axis {}, not 0", node.label(),
                         axis->as_int());
    }
    const ValueId x = node.inputs[0];
    const ValueId outer_x =
        is_captured(body, x) ? outer.find_value(body.value(x).name) : kNoValue;
    if (outer_x == kNoValue) {
      return fmt::format("{} slices a value of the body, not a capture",
                         node.label());
    }
    Cut cut = Cut::kRange;
    const std::optional<Shape>& shape = outer.value(outer_x).shape;
    if (plan.trips >= 0 && shape && shape->rank() > 0 &&
        (*shape)[0].is_fixed()) {
      const int64_t length = (*shape)[0].value();
      if (length < plan.trips) {
        return fmt::format("its trip count {} passes the length {} of '{}'",
                           plan.trips, length, outer.value(outer_x).name);
      }
      cut = length == plan.trips ? Cut::kNone : Cut::kSlice;
    }
    plan.gathers.push_back(n);
    plan.sliced.push_back(outer_x);
    plan.cuts.push_back(cut);
  }
  if (plan.gathers.empty()) return "its body reads no slice of an outer value";
  return std::nullopt;
}

// Why `loop` cannot become a Scan, or nullopt with `plan` filled in.
std::optional<std::string> plan_loop(const Graph& outer, const Node& loop,
                                     const Graph& body, LoopPlan& plan) {
  if (loop.inputs.empty() || loop.inputs[0] == kNoValue) {
    return "it has no trip count";
  }
  if (loop.inputs.size() > 1 && loop.inputs[1] != kNoValue) {
    const Tensor* cond = one_element(outer, loop.inputs[1]);
    if (cond == nullptr || cond->element_i64(0) == 0) {
      return "its initial condition is not a constant true";
    }
  }
  plan.num_carried = loop.inputs.size() < 2 ? 0 : loop.inputs.size() - 2;
  if (body.inputs.size() != 2 + plan.num_carried ||
      body.outputs.size() != loop.outputs.size() + 1) {
    return "its body does not take the iteration, condition and carried "
           "values";
  }
  if (const Tensor* trips = one_element(outer, loop.inputs[0])) {
    plan.trips = trips->element_i64(0);
    if (plan.trips < 0) return "its trip count is negative";
  }
  const ValueUses uses = compute_uses(body);
  if (auto why = plan_cond(outer, body, uses, plan)) return why;
  return plan_gathers(outer, body, uses, plan);
}

// The Scan body: the Loop's body without the iteration number, the
// condition and the Gathers, whose outputs become the scan inputs.
Result<std::shared_ptr<Graph>> scan_body(const Graph& loop_body,
                                         const LoopPlan& plan) {
  auto body = std::make_shared<Graph>(loop_body);
  std::vector<ValueId> inputs(body->inputs.begin() + 2, body->inputs.end());
  std::set<int> removed;
  for (int n : plan.gathers) {
    inputs.push_back(body->nodes[n].outputs[0]);
    removed.insert(n);
  }
  if (plan.cond_identity >= 0) removed.insert(plan.cond_identity);
  body->inputs = std::move(inputs);
  body->outputs.erase(body->outputs.begin());
  std::vector<Node> kept;
  for (size_t n = 0; n < body->nodes.size(); ++n) {
    if (removed.count(static_cast<int>(n)) == 0) {
      kept.push_back(std::move(body->nodes[n]));
    }
  }
  body->nodes = std::move(kept);
  // Captures only the Gathers (or the condition) read go.
  const ValueUses uses = compute_uses(*body);
  std::vector<ValueId> captures;
  for (ValueId id : body->captures) {
    if (uses.use_count(id) > 0) captures.push_back(id);
  }
  body->captures = std::move(captures);
  SEQRT_RETURN_IF_ERROR(remove_nodes(*body, {}));
  return body;
}

ValueId add_constant(Graph& graph, const std::string& base, Tensor tensor) {
  ValueId id = add_fresh_value(graph, base);
  graph.value(id).dtype = tensor.dtype();
  graph.value(id).shape = tensor.shape();
  graph.constants[id] = std::move(tensor);
  return id;
}

// Builds the nodes feeding the Scan and the Scan itself into `added`.
class ScanWriter {
 public:
  ScanWriter(Graph& graph, const Node& loop, const LoopPlan& plan)
      : graph_(graph), loop_(loop), plan_(plan), base_(loop.name) {
    if (base_.empty()) base_ = "loop";
  }

  Status write(std::vector<Node>& added) {
    SEQRT_ASSIGN_OR_RETURN(std::shared_ptr<Graph> body,
                           scan_body(*loop_.attr("body")->as_graph(), plan_));
    std::vector<ValueId> inputs(loop_.inputs.begin() + 2, loop_.inputs.end());
    for (size_t g = 0; g < plan_.gathers.size(); ++g) {
      inputs.push_back(cut(plan_.sliced[g], plan_.cuts[g], added));
    }
    Node scan{loop_.name, "Scan", kOnnxDomain, std::move(inputs),
              loop_.outputs};
    scan.attrs["body"] = Attribute(std::move(body));
    scan.attrs["num_scan_inputs"] =
        Attribute(static_cast<int64_t>(plan_.gathers.size()));
    added.push_back(std::move(scan));
    return Status::ok();
  }

 private:
  ValueId node(std::vector<Node>& added, const std::string& op,
               std::vector<ValueId> inputs, AttrMap attrs,
               const std::string& name) {
    ValueId output = add_fresh_value(graph_, name);
    Node node{name, op, kOnnxDomain, std::move(inputs), {output}};
    node.attrs = std::move(attrs);
    added.push_back(std::move(node));
    return output;
  }

  ValueId ints(const std::string& name, std::vector<int64_t> values) {
    const int64_t size = static_cast<int64_t>(values.size());
    return add_constant(graph_, name,
                        Tensor::from_vector<int64_t>({size}, values));
  }

  // X[:M] as the plan says.
  ValueId cut(ValueId x, Cut how, std::vector<Node>& added) {
    const std::string name = base_ + "_" + graph_.value(x).name;
    if (how == Cut::kNone) return x;
    if (how == Cut::kSlice) {
      return node(
          added, "Slice",
          {x, ints(name + "_starts", {0}), ints(name + "_ends", {plan_.trips}),
           ints(name + "_axes", {0})},
          {}, name + "_steps");
    }
    return node(added, "Gather", {x, steps(added)}, {{"axis", int64_t{0}}},
                name + "_steps");
  }

  // Range(0, M): the iteration numbers, made once for all inputs.
  ValueId steps(std::vector<Node>& added) {
    if (steps_ != kNoValue) return steps_;
    ValueId trips = loop_.inputs[0];
    const std::optional<Shape>& shape = graph_.value(trips).shape;
    if (!shape || shape->rank() != 0) {
      ValueId scalar = add_constant(
          graph_, base_ + "_scalar",
          Tensor::from_vector<int64_t>({0}, std::vector<int64_t>{}));
      trips = node(added, "Reshape", {trips, scalar}, {}, base_ + "_trips");
    }
    steps_ =
        node(added, "Range",
             {add_constant(graph_, base_ + "_zero", Tensor::scalar<int64_t>(0)),
              trips,
              add_constant(graph_, base_ + "_one", Tensor::scalar<int64_t>(1))},
             {}, base_ + "_iterations");
    return steps_;
  }

  Graph& graph_;
  const Node& loop_;
  const LoopPlan& plan_;
  std::string base_;
  ValueId steps_ = kNoValue;
};

std::string loop_name(const Node& node) {
  return node.name.empty() ? std::string("(unnamed)") : node.name;
}

Result<bool> loops_to_scans(Graph& graph, PassNotes& notes) {
  SEQRT_ASSIGN_OR_RETURN(bool changed,
                         rewrite_subgraphs(graph, [&](Graph& sub) {
                           return loops_to_scans(sub, notes);
                         }));
  std::set<int> rewritten;
  std::vector<Node> added;
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    // A copy: writing the Scan adds values to the graph.
    const Node loop = graph.nodes[n];
    const Attribute* body = loop.attr("body");
    if (loop.op != "Loop" || !loop.domain.empty() || body == nullptr ||
        body->type() != AttrType::kGraph) {
      continue;
    }
    LoopPlan plan;
    if (auto why = plan_loop(graph, loop, *body->as_graph(), plan)) {
      notes.push_back(fmt::format("Loop '{}' kept: {}", loop_name(loop), *why));
      continue;
    }
    SEQRT_RETURN_IF_ERROR(ScanWriter(graph, loop, plan).write(added));
    rewritten.insert(static_cast<int>(n));
    size_t cut = 0;
    for (Cut c : plan.cuts) cut += c == Cut::kNone ? 0 : 1;
    notes.push_back(fmt::format(
        "Loop '{}' -> Scan ({} state{}, {} scan input{}{})", loop_name(loop),
        plan.num_carried, plan.num_carried == 1 ? "" : "s", plan.gathers.size(),
        plan.gathers.size() == 1 ? "" : "s",
        cut == 0 ? "" : fmt::format(", {} cut to the trip count", cut)));
  }
  if (rewritten.empty()) return changed;
  SEQRT_RETURN_IF_ERROR(replace_nodes(graph, rewritten, std::move(added)));
  return true;
}

}  // namespace

Pass loop_to_scan_pass() {
  Pass pass;
  pass.name = "loop_to_scan";
  pass.run = [](Graph& graph) {
    PassNotes notes;
    return loops_to_scans(graph, notes);
  };
  pass.run_noting = loops_to_scans;
  return pass;
}

}  // namespace seqrt
