// Lifts Scan loops whose body is a recurrence seqrt has a sequence op for
// (a selective / diagonal SSM scan, a retention state update, an LSTM or
// GRU cell) into that op, with the layout ops around it. A lift is kept only
// when the Scan and its replacement agree on random inputs (a few steps, the
// node's own sizes), evaluated with the reference kernels; otherwise the Scan
// stays and the pass notes why. See README.md.
#include <cmath>
#include <random>
#include <set>

#include <fmt/format.h>

#include "compiler/passes/evaluate_reference.h"
#include "compiler/passes/lift_scan_recurrences.h"
#include "compiler/passes/passes.h"
#include "compiler/passes/rewrite.h"

namespace seqrt {
namespace {

constexpr int64_t kCheckSteps = 5;
constexpr double kCheckTolerance = 1e-4;
// The recurrences take a few dozen nodes; a body larger than this, or one
// with control flow of its own, is none of them (and the check, which runs
// every body node, should not run such a body).
constexpr size_t kMaxBodyNodes = 64;

bool all_zero(const Node& node, const char* attr) {
  const Attribute* a = node.attr(attr);
  if (a == nullptr) return true;
  if (a->type() != AttrType::kInts) return false;
  for (int64_t v : a->as_ints()) {
    if (v != 0) return false;
  }
  return true;
}

// The Scan's body when the node is one the recognisers may read: axis 0
// and forward everywhere, every input given, f32 throughout.
const Graph* liftable_body(const Graph& graph, const Node& node,
                           size_t& num_states) {
  const Attribute* body = node.attr("body");
  const Attribute* m = node.attr("num_scan_inputs");
  if (node.op != "Scan" || !node.domain.empty() || body == nullptr ||
      body->type() != AttrType::kGraph || m == nullptr ||
      m->type() != AttrType::kInt || m->as_int() < 1 ||
      static_cast<size_t>(m->as_int()) > node.inputs.size()) {
    return nullptr;
  }
  for (const char* attr : {"scan_input_axes", "scan_input_directions",
                           "scan_output_axes", "scan_output_directions"}) {
    if (!all_zero(node, attr)) return nullptr;
  }
  const Graph& g = *body->as_graph();
  if (g.inputs.size() != node.inputs.size() ||
      g.outputs.size() != node.outputs.size() ||
      g.nodes.size() > kMaxBodyNodes) {
    return nullptr;
  }
  for (const Node& inner : g.nodes) {
    if (inner.has_subgraphs()) return nullptr;
  }
  for (ValueId id : node.inputs) {
    if (id == kNoValue || graph.value(id).dtype != DType::kF32) return nullptr;
  }
  num_states = node.inputs.size() - static_cast<size_t>(m->as_int());
  return &g;
}

// A symbolic dim's stand-in: small, and not 1 so no axis looks broadcast.
constexpr int64_t kProbeSize = 2;

// `shape` with its symbolic dims at their probe sizes (added to `probe`);
// nullopt when a dim is unknown.
std::optional<Shape> probed_shape(const Shape& shape,
                                  std::map<std::string, int64_t>& probe) {
  std::vector<Dim> dims = shape.dims();
  for (Dim& dim : dims) {
    if (dim.is_unknown()) return std::nullopt;
    if (dim.is_symbol()) {
      dim = Dim(probe.emplace(dim.symbol_name(), kProbeSize).first->second);
    }
  }
  return Shape(dims);
}

// A copy of `body` whose value shapes have their symbolic dims at probe
// sizes (recursively for the subgraphs the recognisers do not read: none).
Graph probed_body(const Graph& body, std::map<std::string, int64_t>& probe) {
  Graph copy = body;
  for (Value& value : copy.values) {
    if (!value.shape || value.shape->is_fixed()) continue;
    std::optional<Shape> shape = probed_shape(*value.shape, probe);
    if (shape) value.shape = *shape;
  }
  return copy;
}

// "; read with batch=2" when symbolic dims stood at probe sizes.
std::string probe_note(const std::map<std::string, int64_t>& probe) {
  if (probe.empty()) return "";
  std::vector<std::string> parts;
  for (const auto& [name, size] : probe) {
    parts.push_back(fmt::format("{}={}", name, size));
  }
  return fmt::format("; read with {}", fmt::join(parts, ", "));
}

Result<Tensor> random_input(DType dtype, const std::vector<int64_t>& dims,
                            InputFill fill, std::mt19937& rng) {
  SEQRT_ASSIGN_OR_RETURN(Tensor tensor, Tensor::allocate(dtype, dims));
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_real_distribution<double> step(0.01, 0.5);
  for (int64_t i = 0; i < tensor.num_elements(); ++i) {
    tensor.set_element_f64(i,
                           fill == InputFill::kStep ? step(rng) : normal(rng));
  }
  return tensor;
}

// A graph of its own holding the Scan (or, with `lift`, its replacement)
// over kCheckSteps steps: the Scan's inputs as inputs, the outer constants
// its body captures as constants of the same names.
Result<Graph> check_graph(const ScanSite& site, const ScanLift* lift) {
  Graph g;
  g.name = "lift_check";
  std::vector<ValueId> inputs;
  for (size_t i = 0; i < site.scan.inputs.size(); ++i) {
    const Value& outer = site.outer.value(site.scan.inputs[i]);
    if (!outer.shape) return invalid_argument("input {} has no shape", i);
    std::vector<Dim> dims = outer.shape->dims();
    if (i >= site.num_states && !dims.empty()) dims[0] = Dim(kCheckSteps);
    std::map<std::string, int64_t> probe = site.probe;
    Shape shape = probed_shape(Shape(dims), probe).value_or(Shape(dims));
    if (!shape.is_fixed()) {
      return invalid_argument("input '{}' has dims not fixed", outer.name);
    }
    ValueId id = g.add_value(Value{outer.name, outer.dtype, shape});
    g.inputs.push_back(id);
    inputs.push_back(id);
  }
  for (ValueId capture : site.body.captures) {
    const std::string& name = site.body.value(capture).name;
    if (g.find_value(name) != kNoValue) continue;
    ValueId outer = site.outer.find_value(name);
    const Tensor* tensor =
        outer == kNoValue ? nullptr : site.outer.constant(outer);
    if (tensor == nullptr) {
      return invalid_argument("the body reads '{}', not a constant", name);
    }
    ValueId id = g.add_value(Value{name, tensor->dtype(), tensor->shape()});
    g.constants[id] = *tensor;
  }
  std::vector<ValueId> outputs;
  for (size_t i = 0; i < site.scan.outputs.size(); ++i) {
    outputs.push_back(add_fresh_value(g, fmt::format("output_{}", i)));
  }
  if (lift == nullptr) {
    Node scan = site.scan;
    scan.inputs = inputs;
    scan.outputs = outputs;
    g.nodes.push_back(std::move(scan));
  } else {
    lift->build(g, inputs, outputs, g.nodes);
  }
  g.outputs = outputs;
  return g;
}

// The largest difference between the Scan's outputs and the lift's on
// random inputs, relative to the largest output magnitude.
Result<double> lift_error(const ScanSite& site, const ScanLift& lift) {
  SEQRT_ASSIGN_OR_RETURN(Graph original, check_graph(site, nullptr));
  SEQRT_ASSIGN_OR_RETURN(Graph lifted, check_graph(site, &lift));
  std::mt19937 rng(26);
  std::vector<Tensor> feeds;
  for (size_t i = 0; i < original.inputs.size(); ++i) {
    const Value& value = original.value(original.inputs[i]);
    SEQRT_ASSIGN_OR_RETURN(Tensor feed,
                           random_input(value.dtype, value.shape->fixed_dims(),
                                        lift.fills[i], rng));
    feeds.push_back(std::move(feed));
  }
  SEQRT_ASSIGN_OR_RETURN(std::vector<Tensor> want,
                         evaluate_reference(original, feeds));
  SEQRT_ASSIGN_OR_RETURN(std::vector<Tensor> got,
                         evaluate_reference(lifted, feeds));
  double largest = 0, worst = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    if (got[i].dims() != want[i].dims()) {
      return invalid_argument("output {} has dims [{}], expected [{}]", i,
                              fmt::join(got[i].dims(), ","),
                              fmt::join(want[i].dims(), ","));
    }
    for (int64_t e = 0; e < want[i].num_elements(); ++e) {
      double a = got[i].element_f64(e), b = want[i].element_f64(e);
      if (!std::isfinite(a) || !std::isfinite(b)) {
        return invalid_argument("output {} is not finite", i);
      }
      largest = std::max(largest, std::fabs(b));
      worst = std::max(worst, std::fabs(a - b));
    }
  }
  return largest > 0 ? worst / largest : worst;
}

std::string scan_name(const Node& node) {
  return node.name.empty() ? std::string("(unnamed)") : node.name;
}

Result<bool> lift_scans(Graph& graph, PassNotes& notes) {
  SEQRT_ASSIGN_OR_RETURN(bool changed,
                         rewrite_subgraphs(graph, [&](Graph& sub) {
                           return lift_scans(sub, notes);
                         }));
  std::set<int> lifted;
  std::vector<Node> added;
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    size_t num_states = 0;
    const Graph* body = liftable_body(graph, graph.nodes[n], num_states);
    if (body == nullptr) continue;
    // Symbolic dims (an export's batch) at probe sizes; the outer inputs'
    // symbols too, so the check's inputs agree with the body.
    std::map<std::string, int64_t> probe;
    for (size_t i = 0; i < graph.nodes[n].inputs.size(); ++i) {
      const std::optional<Shape>& shape =
          graph.value(graph.nodes[n].inputs[i]).shape;
      if (!shape) continue;
      std::vector<Dim> dims = shape->dims();
      // The check sets a scan input's length itself.
      if (i >= num_states && !dims.empty()) dims.erase(dims.begin());
      probed_shape(Shape(dims), probe);
    }
    const Graph probed = probed_body(*body, probe);
    ScanSite site{graph, graph.nodes[n], probed, num_states, probe};
    for (auto recognise :
         {recognise_selective_scan, recognise_retention,
          recognise_linear_attention, recognise_lstm, recognise_gru}) {
      std::optional<ScanLift> lift = recognise(site);
      if (!lift) continue;
      Result<double> error = lift_error(site, *lift);
      const std::string name = scan_name(graph.nodes[n]);
      if (!error.is_ok() || *error > kCheckTolerance) {
        notes.push_back(fmt::format(
            "Scan '{}' kept: its body reads as {} but the lift {}", name,
            lift->op,
            error.is_ok()
                ? fmt::format("differs by {:.2g} (relative) on "
                              "random inputs",
                              *error)
                : "failed on random inputs: " + error.status().message()));
        break;
      }
      // Copies: building adds values to the graph the site refers to.
      const std::vector<ValueId> inputs = graph.nodes[n].inputs;
      const std::vector<ValueId> outputs = graph.nodes[n].outputs;
      lift->build(graph, inputs, outputs, added);
      lifted.insert(static_cast<int>(n));
      notes.push_back(fmt::format("Scan '{}' -> {} ({}{})", name, lift->op,
                                  lift->summary, probe_note(probe)));
      break;
    }
  }
  if (lifted.empty()) return changed;
  SEQRT_RETURN_IF_ERROR(replace_nodes(graph, lifted, std::move(added)));
  return true;
}

}  // namespace

const Tensor* body_constant(const ScanSite& site, ValueId id) {
  if (const Tensor* local = site.body.constant(id)) return local;
  for (ValueId capture : site.body.captures) {
    if (capture != id) continue;
    ValueId outer = site.outer.find_value(site.body.value(id).name);
    return outer == kNoValue ? nullptr : site.outer.constant(outer);
  }
  return nullptr;
}

int scan_input_index(const ScanSite& site, ValueId id) {
  for (size_t i = site.num_states; i < site.body.inputs.size(); ++i) {
    if (site.body.inputs[i] == id) return static_cast<int>(i);
  }
  return -1;
}

int pick_pair(const std::vector<Factor>& fs,
              const std::function<bool(const Factor&)>& is_first,
              const std::function<bool(const Factor&)>& is_second) {
  if (fs.size() != 2) return -1;
  for (int i : {0, 1}) {
    if (is_first(fs[i]) && is_second(fs[1 - i])) return i;
  }
  return -1;
}

std::optional<int64_t> reduced_axis(const ProductReader& r, const Node& sum) {
  std::optional<std::vector<int64_t>> axes;
  if (sum.inputs.size() > 1 && sum.inputs[1] != kNoValue) {
    axes = r.ints(sum.inputs[1]);
  } else if (const Attribute* attr = sum.attr("axes")) {
    axes = attr->as_ints();
  }
  if (!axes || axes->size() != 1) return std::nullopt;
  return (*axes)[0];
}

std::optional<StateUpdate> match_state_update(const ScanSite& site,
                                              const ProductReader& r,
                                              size_t inputs, size_t min_rank,
                                              size_t max_rank) {
  const Graph& body = site.body;
  if (site.num_states != 1 || body.inputs.size() != inputs ||
      body.outputs.size() != 2) {
    return std::nullopt;
  }
  std::optional<std::vector<int64_t>> state = r.dims(body.inputs[0]);
  const Node* add = r.producer(r.before_views(body.outputs[0]), "Add");
  if (!state || state->size() < min_rank || state->size() > max_rank ||
      r.dims(body.outputs[0]) != state || add == nullptr ||
      add->inputs.size() != 2) {
    return std::nullopt;
  }
  return StateUpdate{*state, add};
}

ValueId add_ints_constant(Graph& graph, const std::string& base,
                          const std::vector<int64_t>& values) {
  return add_tensor_constant(
      graph, base,
      Tensor::from_vector<int64_t>({static_cast<int64_t>(values.size())},
                                   values));
}

ValueId add_op(Graph& graph, std::vector<Node>& add, const std::string& op,
               std::vector<ValueId> inputs, AttrMap attrs,
               const std::string& name, ValueId output) {
  if (output == kNoValue) output = add_fresh_value(graph, name);
  Node node{name, op, kOnnxDomain, std::move(inputs), {output}};
  node.attrs = std::move(attrs);
  add.push_back(std::move(node));
  return output;
}

ValueId move_time(Graph& graph, std::vector<Node>& add, ValueId x,
                  std::vector<int64_t> perm,
                  const std::vector<int64_t>& unsqueeze,
                  const std::string& name) {
  if (unsqueeze.empty()) {
    return add_op(graph, add, "Transpose", {x},
                  {{"perm", Attribute(std::move(perm))}}, name);
  }
  ValueId moved = add_op(graph, add, "Transpose", {x},
                         {{"perm", Attribute(std::move(perm))}}, name + "_t");
  return add_op(graph, add, "Unsqueeze",
                {moved, add_ints_constant(graph, name + "_axes", unsqueeze)},
                {}, name);
}

void restore_layout(Graph& graph, std::vector<Node>& add, ValueId x,
                    bool squeeze, const std::vector<int64_t>& perm,
                    ValueId output, const std::string& name) {
  if (!squeeze && perm.empty()) {
    add_op(graph, add, "Identity", {x}, {}, name, output);
    return;
  }
  if (squeeze) {
    ValueId axes = add_ints_constant(graph, name + "_axes", {0});
    x = add_op(graph, add, "Squeeze", {x, axes}, {},
               perm.empty() ? name : name + "_squeezed",
               perm.empty() ? output : kNoValue);
  }
  if (!perm.empty()) {
    add_op(graph, add, "Transpose", {x}, {{"perm", Attribute(perm)}}, name,
           output);
  }
}

std::vector<int> with_batch_axis(bool batched, std::vector<int> placement) {
  if (!batched) return placement;
  std::vector<int> moved = {0};
  for (int axis : placement) moved.push_back(axis < 0 ? axis : axis + 1);
  return moved;
}

std::vector<int64_t> with_batch_dim(int64_t batch, std::vector<int64_t> dims) {
  if (batch > 0) dims.insert(dims.begin(), batch);
  return dims;
}

Pass lift_scan_recurrences_pass() {
  Pass pass;
  pass.name = "lift_scan_recurrences";
  pass.run = [](Graph& graph) {
    PassNotes notes;
    return lift_scans(graph, notes);
  };
  pass.run_noting = lift_scans;
  return pass;
}

}  // namespace seqrt
