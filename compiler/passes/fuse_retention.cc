// LinearAttention (update_rule "gated") whose decay is one constant per head
// (B,T,H) — folded to a constant or an Expand of a (H)-shaped constant —
// is RetNet retention with γ_h = exp(g_h): seqrt::Retention, whose kernels
// use the chunkwise form instead of a token recurrence. The packed
// (B,T,H·d) inputs are viewed as (B,H,T,d) around it (Reshape, Transpose).
// LinearAttention keeps its state unscaled and scales the output, where
// Retention scales K into the state; the fused node takes scale = 1 and Q
// multiplied by the scale, so past and present states stay the same.
#include <cmath>

#include "compiler/passes/match.h"
#include "compiler/passes/passes.h"

namespace seqrt {
namespace {

// The per-head decays g_h when `decay` (B,T,H) holds the same H values at
// every (b, t).
std::optional<std::vector<double>> per_head_decay(const Matcher& m,
                                                  ValueId decay, int64_t heads,
                                                  std::set<int>& nodes) {
  const Tensor* values = m.graph().constant(decay);
  int expand_n = m.producer(decay, "Expand");
  if (values == nullptr && expand_n >= 0) {
    // Expand of a constant whose dims other than the last are 1.
    values = m.graph().constant(m.node(expand_n).inputs[0]);
    if (values == nullptr || values->rank() > 3) return std::nullopt;
    for (size_t d = 0; d + 1 < values->rank(); ++d) {
      if (values->dim(d) != 1) return std::nullopt;
    }
    nodes.insert(expand_n);
  }
  const Shape* shape = m.shape(decay);
  if (values == nullptr || values->rank() == 0 || shape == nullptr ||
      shape->rank() != 3 || (*shape)[2] != Dim(heads) ||
      values->dims().back() != heads) {
    return std::nullopt;
  }
  std::vector<double> g(static_cast<size_t>(heads));
  for (int64_t i = 0; i < values->num_elements(); ++i) {
    double value = values->element_f64(i);
    size_t h = static_cast<size_t>(i % heads);
    if (i < heads) g[h] = value;
    if (value != g[h] || !std::isfinite(value) || value > 0) {
      return std::nullopt;  // not constant per head, or γ = exp(g) > 1
    }
  }
  return g;
}

// Nodes viewing packed (B,T,H·d) `x` as (B,H,T,d), appended to `add`.
ValueId to_heads(Graph& graph, std::vector<Node>& add, ValueId x, int64_t heads,
                 int64_t width, const std::string& base) {
  ValueId shape = add_fresh_value(graph, base + "_heads_shape");
  graph.value(shape).dtype = DType::kI64;
  graph.value(shape).shape = Shape({4});
  graph.constants[shape] =
      Tensor::from_vector<int64_t>({4}, {0, 0, heads, width});
  ValueId split = add_fresh_value(graph, base + "_split");
  ValueId out = add_fresh_value(graph, base + "_heads");
  Node reshape{base + "_split", "Reshape", kOnnxDomain, {x, shape}, {split}};
  Node transpose{base + "_heads", "Transpose", kOnnxDomain, {split}, {out}};
  transpose.attrs = {{"perm", Attribute(std::vector<int64_t>{0, 2, 1, 3})}};
  add.push_back(std::move(reshape));
  add.push_back(std::move(transpose));
  return out;
}

struct RetentionSpec {
  ValueId q = kNoValue, k = kNoValue, v = kNoValue, past = kNoValue;
  ValueId out = kNoValue, present = kNoValue;
  int64_t heads = 0, dk = 0, dv = 0, chunk = 64;
  double scale = 1.0;
  std::vector<float> gammas;
  std::string name;
};

// Builds the fused subgraph into `add`; runs when the rewrite is applied.
void build_retention(const RetentionSpec& spec, Graph& graph,
                     std::vector<Node>& add) {
  ValueId q =
      to_heads(graph, add, spec.q, spec.heads, spec.dk, spec.name + "_q");
  if (spec.scale != 1.0) {
    ValueId scale = add_fresh_value(graph, spec.name + "_scale");
    DType dtype = graph.value(spec.q).dtype;
    Tensor scalar = Tensor::allocate(dtype, {}).value();
    scalar.set_element_f64(0, spec.scale);
    graph.value(scale).dtype = dtype;
    graph.value(scale).shape = Shape();
    graph.constants[scale] = scalar;
    ValueId scaled = add_fresh_value(graph, spec.name + "_q_scaled");
    add.push_back(Node{
        spec.name + "_q_scaled", "Mul", kOnnxDomain, {q, scale}, {scaled}});
    q = scaled;
  }
  ValueId k =
      to_heads(graph, add, spec.k, spec.heads, spec.dk, spec.name + "_k");
  ValueId v =
      to_heads(graph, add, spec.v, spec.heads, spec.dv, spec.name + "_v");
  ValueId y = add_fresh_value(graph, spec.name + "_y");
  Node retention{spec.name, "Retention", kSeqrtDomain, {q, k, v}, {y}};
  if (spec.past != kNoValue) retention.inputs.push_back(spec.past);
  if (spec.present != kNoValue) retention.outputs.push_back(spec.present);
  retention.attrs = {{"gammas", Attribute(spec.gammas)},
                     {"scale", Attribute(1.0f)},
                     {"chunk_size", Attribute(spec.chunk)}};
  add.push_back(std::move(retention));
  ValueId y_t = add_fresh_value(graph, spec.name + "_y_tokens");
  Node transpose{spec.name + "_y_tokens", "Transpose", kOnnxDomain, {y}, {y_t}};
  transpose.attrs = {{"perm", Attribute(std::vector<int64_t>{0, 2, 1, 3})}};
  add.push_back(std::move(transpose));
  ValueId shape = add_fresh_value(graph, spec.name + "_packed_shape");
  graph.value(shape).dtype = DType::kI64;
  graph.value(shape).shape = Shape({3});
  graph.constants[shape] =
      Tensor::from_vector<int64_t>({3}, {0, 0, spec.heads * spec.dv});
  add.push_back(Node{
      spec.name + "_packed", "Reshape", kOnnxDomain, {y_t, shape}, {spec.out}});
}

std::optional<Fusion> match_retention(const Matcher& m, int n) {
  const Node& node = m.node(n);
  const Attribute* rule = node.attr("update_rule");
  if (node.op != "LinearAttention" || !node.domain.empty() || rule == nullptr ||
      rule->as_string() != "gated" || node.inputs.size() < 5 ||
      node.inputs[4] == kNoValue ||
      (node.inputs.size() > 5 && node.inputs[5] != kNoValue)) {
    return std::nullopt;
  }
  RetentionSpec spec;
  spec.heads = int_attr(node, "q_num_heads", 0);
  const Shape* q = m.shape(node.inputs[0]);
  const Shape* v = m.shape(node.inputs[2]);
  if (spec.heads <= 0 || int_attr(node, "kv_num_heads", 0) != spec.heads ||
      q == nullptr || v == nullptr || q->rank() != 3 || v->rank() != 3 ||
      !(*q)[2].is_fixed() || !(*v)[2].is_fixed() ||
      !is_float(m.dtype(node.inputs[0]))) {
    return std::nullopt;
  }
  spec.dk = (*q)[2].value() / spec.heads;
  spec.dv = (*v)[2].value() / spec.heads;
  if (spec.dk * spec.heads != (*q)[2].value() || spec.dk == 0 ||
      spec.dv * spec.heads != (*v)[2].value() || spec.dv == 0) {
    return std::nullopt;
  }
  Fusion fusion;
  fusion.remove = {n};
  std::optional<std::vector<double>> g =
      per_head_decay(m, node.inputs[4], spec.heads, fusion.remove);
  if (!g || !m.is_private(fusion.remove,
                          {node.outputs.begin(), node.outputs.end()})) {
    return std::nullopt;
  }
  for (double decay : *g) spec.gammas.push_back(std::exp(decay));
  const Attribute* scale = node.attr("scale");
  spec.scale = scale == nullptr || scale->as_float() == 0.0f
                   ? 1.0 / std::sqrt(static_cast<double>(spec.dk))
                   : scale->as_float();
  spec.chunk = int_attr(node, "chunk_size", 64);
  spec.q = node.inputs[0];
  spec.k = node.inputs[1];
  spec.v = node.inputs[2];
  spec.past = node.inputs.size() > 3 ? node.inputs[3] : kNoValue;
  spec.out = node.outputs[0];
  spec.present = node.outputs.size() > 1 ? node.outputs[1] : kNoValue;
  spec.name = node.name.empty() ? "retention" : node.name;
  fusion.create_values = [spec](Graph& graph, std::vector<Node>& add) {
    build_retention(spec, graph, add);
  };
  return fusion;
}

}  // namespace

Pass fuse_retention_pass() {
  return {"fuse_retention",
          [](Graph& graph) { return apply_fusions(graph, match_retention); }};
}

}  // namespace seqrt
