// seqrt::RungeKutta written out as its stages (OPS.md): the body F inlined
// once per stage, the stage inputs and the weighted sum as ONNX elementwise
// ops, the rk2 gate as Concat/MatMul/Add/Sigmoid. Backends whose plans are
// flat schedules (Vulkan, CUDA) run the result with their own kernels; the
// CPU backend keeps its fused kernel and never calls this.
#include "compiler/passes/expand_runge_kutta.h"

#include <map>
#include <set>
#include <string>
#include <vector>

#include "compiler/passes/inline_subgraph.h"
#include "compiler/passes/rewrite.h"

namespace seqrt {

std::string runge_kutta_expansion_blocker(const Graph& graph,
                                          const Node& node) {
  const Attribute* body_attr = node.attr("body");
  const Attribute* method = node.attr("method");
  if (body_attr == nullptr || body_attr->type() != AttrType::kGraph ||
      method == nullptr || method->type() != AttrType::kString) {
    return "it has no body graph or method";
  }
  const Graph& body = *body_attr->as_graph();
  if (body.inputs.size() != 1 || body.outputs.size() != 1) {
    return "its body must have one input and one output";
  }
  for (const Node& inner : body.nodes) {
    for (const auto& [name, attr] : inner.attrs) {
      if (attr.type() == AttrType::kGraph) {
        return "body node " + inner.label() + " has a subgraph of its own";
      }
    }
  }
  const std::string blocker = inline_blocker(graph, body);
  if (!blocker.empty()) return "its body: " + blocker;
  const std::string& m = method->as_string();
  if (m != "euler" && m != "rk2" && m != "rk2_gated" && m != "rk4") {
    return "unknown method '" + m + "'";
  }
  const Value& y = graph.value(node.inputs[0]);
  if (m == "rk2_gated" && (!y.shape.has_value() || y.shape->rank() == 0)) {
    return "the gate of rk2_gated needs y of known rank >= 1";
  }
  return "";
}

namespace {

// Builds the replacement nodes of one RungeKutta node.
class Expander : public NodeWriter {
 public:
  Expander(Graph& graph, const Node& node)
      : NodeWriter(graph, node.name.empty() ? "runge_kutta" : node.name),
        node_(node),
        body_(*node.attr("body")->as_graph()),
        dtype_(graph.value(node.inputs[0]).dtype),
        inliner_(graph, body_, base_) {}

  // Fails only when a coefficient cannot be allocated.
  Status run() {
    const std::string& method = node_.attr("method")->as_string();
    const ValueId y = node_.inputs[0];
    const ValueId out = node_.outputs[0];
    if (method == "euler") {
      emit("Add", {y, stage(1, y)}, out);
    } else if (method == "rk2") {
      ValueId f1 = stage(1, y);
      ValueId f2 = stage(2, binary("Add", y, f1));
      emit("Add", {y, binary("Mul", binary("Add", f1, f2), scalar(0.5))}, out);
    } else if (method == "rk4") {
      ValueId half = scalar(0.5);
      ValueId f1 = stage(1, y);
      ValueId f2 = stage(2, binary("Add", y, binary("Mul", f1, half)));
      ValueId f3 = stage(3, binary("Add", y, binary("Mul", f2, half)));
      ValueId f4 = stage(4, binary("Add", y, f3));
      ValueId two = scalar(2.0);
      ValueId sum = binary("Add", binary("Add", f1, binary("Mul", f2, two)),
                           binary("Add", binary("Mul", f3, two), f4));
      emit("Add", {y, binary("Mul", sum, scalar(1.0 / 6.0))}, out);
    } else {
      ValueId f1 = stage(1, y);
      ValueId f2 = stage(2, binary("Add", y, f1));
      ValueId g = gate(f1, f2);
      // y + g·F1 + (1 − g)·F2 = (y + F2) + g·(F1 − F2)
      ValueId mixed = binary("Mul", g, binary("Sub", f1, f2));
      emit("Add", {binary("Add", y, f2), mixed}, out);
    }
    return status_;
  }

 private:
  ValueId binary(const std::string& op, ValueId a, ValueId b) {
    ValueId out = fresh(op == "Add" ? "sum" : op == "Mul" ? "scaled" : "diff");
    emit(op, {a, b}, out);
    return out;
  }

  // A 0-d constant of y's dtype.
  ValueId scalar(double value) {
    ValueId id = fresh("coefficient");
    Result<Tensor> tensor = Tensor::allocate(dtype_, {});
    if (!tensor.is_ok()) {
      if (status_.is_ok()) status_ = tensor.status();
      return id;
    }
    tensor->set_element_f64(0, value);
    graph_.constants[id] = *tensor;
    graph_.value(id).dtype = dtype_;
    graph_.value(id).shape = Shape();
    return id;
  }

  // g = σ(Concat(F1, F2)·gate_weight + gate_bias), one per position, (…, 1).
  ValueId gate(ValueId f1, ValueId f2) {
    ValueId both = fresh("gate_input");
    emit("Concat", {f1, f2}, both, {{"axis", int64_t{-1}}});
    ValueId axes = fresh("gate_axes");
    graph_.constants[axes] = Tensor::from_vector<int64_t>({1}, {1});
    graph_.value(axes).dtype = DType::kI64;
    graph_.value(axes).shape = Shape::from_dims({1});
    ValueId column = fresh("gate_column");
    emit("Unsqueeze", {node_.inputs[1], axes}, column);
    ValueId logit = fresh("gate_logit");
    emit("MatMul", {both, column}, logit);
    ValueId biased = binary("Add", logit, node_.inputs[2]);
    ValueId g = fresh("gate");
    emit("Sigmoid", {biased}, g);
    return g;
  }

  // F(input) for stage k: a copy of the body (inline_subgraph.h).
  ValueId stage(int k, ValueId input) {
    return inliner_.inline_copy({input}, "f" + std::to_string(k) + "_",
                                nodes_)[0];
  }

  const Node& node_;
  const Graph& body_;
  DType dtype_;
  SubgraphInliner inliner_;
  Status status_;
};

}  // namespace

Result<bool> expand_runge_kutta(Graph& graph) {
  std::set<int> expanded;
  std::vector<Node> added;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& node = graph.nodes[i];
    if (node.domain != kSeqrtDomain || node.op != "RungeKutta" ||
        !runge_kutta_expansion_blocker(graph, node).empty()) {
      continue;
    }
    Expander expander(graph, node);
    SEQRT_RETURN_IF_ERROR(expander.run());
    for (Node& n : expander.take_nodes()) added.push_back(std::move(n));
    expanded.insert(static_cast<int>(i));
  }
  if (expanded.empty()) return false;
  SEQRT_RETURN_IF_ERROR(replace_nodes(graph, expanded, std::move(added)));
  return true;
}

}  // namespace seqrt
