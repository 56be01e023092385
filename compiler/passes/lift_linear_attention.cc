// Recognises gated and delta-rule linear attention written as a Scan body,
// per step t with scan inputs q_t, k_t (H,dk), v_t (H,dv), a gate or a
// β_t, and the state S (H,dk,dv):
//   gated  S' = a_t · S + k_t ⊗ v_t, a_t = Exp(g_t) or a gate a_t itself,
//          per head (H) or per key (H,dk)
//   delta  S' = S + k_t ⊗ (β_t · (v_t − Sᵀk_t)), β_t per head (H), Sᵀk_t
//          as MatMul(k_t[…,None,:], S) or ReduceSum(S · k_t[…,None], dk)
//   o_t = q_t·S' (match_matrix_readout)
// in any operand order and grouping, or all of it with a leading batch axis.
// A constant gate is retention (lift_retention.cc). It becomes ONNX
// LinearAttention (opset 27; update_rule gated / delta, scale 1) over
// packed (Bt,T,H·d) views of the (T,Bt,H,d) inputs, the gate as its log.
#include <fmt/format.h>

#include <set>

#include "compiler/passes/lift_scan_recurrences.h"
#include "compiler/passes/rewrite.h"

namespace seqrt {
namespace {

struct LinearRoles {
  MatrixState state;
  bool delta = false;  // else gated
  int q = -1, k = -1, v = -1;
  int gate = -1;            // gated: the scan input of g_t or a_t
  bool gate_is_log = true;  // g_t under an Exp in the body
  bool gate_per_key = false;
  int beta = -1;  // delta

  std::vector<int> at(std::vector<int> placement) const {
    return with_batch_axis(state.batch > 0, std::move(placement));
  }
  std::vector<int64_t> dims(std::vector<int64_t> d) const {
    return with_batch_dim(state.batch, std::move(d));
  }
};

std::vector<int64_t> above_one(const std::vector<int64_t>& dims) {
  std::vector<int64_t> kept;
  for (int64_t d : dims) {
    if (d != 1) kept.push_back(d);
  }
  return kept;
}

// Whether `f` holds a value whose axes of size > 1 are, in order, `want`
// and land on the product's axes `axes`.
bool placed_as(const ProductReader& r, const Factor& f,
               const std::vector<int64_t>& want, const std::vector<int>& axes) {
  std::optional<std::vector<int64_t>> dims = r.dims(f.source);
  if (!dims || above_one(*dims) != above_one(want)) return false;
  std::vector<int> placement(dims->size(), -1);
  size_t next = 0;
  for (size_t j = 0; j < dims->size(); ++j) {
    if ((*dims)[j] != 1 && next < axes.size()) placement[j] = axes[next++];
  }
  return r.placed(f, placement);
}

// The gate a_t = Exp(g_t) or a_t: sets gate, gate_is_log, gate_per_key.
bool match_gate(const ScanSite& site, const ProductReader& r, const Factor& f,
                LinearRoles& roles) {
  const MatrixState& s = roles.state;
  for (bool per_key : {false, true}) {
    const std::vector<int64_t> shape =
        per_key ? roles.dims({s.heads, s.dk}) : roles.dims({s.heads});
    if (!placed_as(r, f, shape, per_key ? roles.at({0, 1}) : roles.at({0}))) {
      continue;
    }
    ValueId source = f.source;
    const Node* exp = r.producer(source, "Exp");
    if (exp != nullptr) source = r.before_views(exp->inputs[0]);
    const int index = scan_input_index(site, source);
    std::optional<std::vector<int64_t>> dims = r.dims(source);
    if (index < 0 || !dims || above_one(*dims) != above_one(shape)) continue;
    roles.gate = index;
    roles.gate_is_log = exp != nullptr;
    roles.gate_per_key = per_key;
    return true;
  }
  return false;
}

// a_t · S_prev: sets the gate.
bool match_gated_decay(const ScanSite& site, const ProductReader& r,
                       ValueId value, LinearRoles& roles) {
  const ValueId s_prev = site.body.inputs[0];
  std::optional<std::vector<Factor>> fs = r.factors(value);
  if (!fs || fs->size() != 2) return false;
  for (int i : {0, 1}) {
    if ((*fs)[i].source == s_prev && r.placed((*fs)[i], roles.at({0, 1, 2})) &&
        match_gate(site, r, (*fs)[1 - i], roles)) {
      return true;
    }
  }
  return false;
}

// k_t ⊗ v_t: sets k and v.
bool match_key_value(const ScanSite& site, const ProductReader& r,
                     ValueId value, LinearRoles& roles) {
  const MatrixState& s = roles.state;
  std::optional<std::vector<Factor>> fs = r.factors(value);
  if (!fs) return false;
  auto is_input = [&](const Factor& f, std::vector<int64_t> dims,
                      std::vector<int> axes) {
    return scan_input_index(site, f.source) >= 0 &&
           r.dims(f.source) == roles.dims(std::move(dims)) &&
           r.placed(f, roles.at(std::move(axes)));
  };
  int k = pick_pair(
      *fs,
      [&](const Factor& f) {
        return is_input(f, {s.heads, s.dk}, {0, 1});
      },
      [&](const Factor& f) {
        return is_input(f, {s.heads, s.dv}, {0, 2});
      });
  if (k < 0) return false;
  roles.k = scan_input_index(site, (*fs)[k].source);
  roles.v = scan_input_index(site, (*fs)[1 - k].source);
  return true;
}

// Sᵀk_t per head, (…,H,dv) through views: the scan input of k, or -1.
int match_state_times_key(const ScanSite& site, const ProductReader& r,
                          ValueId value, const LinearRoles& roles) {
  const MatrixState& s = roles.state;
  const ValueId s_prev = site.body.inputs[0];
  const ValueId read = r.before_views(value);
  if (const Node* mm = r.producer(read, "MatMul")) {
    std::optional<std::vector<Factor>> fs = r.factors(mm->inputs[0]);
    if (mm->inputs[1] != s_prev || !fs || fs->size() != 1 ||
        r.dims(mm->inputs[0]) != roles.dims({s.heads, 1, s.dk}) ||
        r.dims((*fs)[0].source) != roles.dims({s.heads, s.dk}) ||
        !r.placed((*fs)[0], roles.at({0, 2}))) {
      return -1;
    }
    return scan_input_index(site, (*fs)[0].source);
  }
  const Node* sum = r.producer(read, "ReduceSum");
  if (sum == nullptr) return -1;
  std::optional<int64_t> axis = reduced_axis(r, *sum);
  std::optional<std::vector<Factor>> fs = r.factors(sum->inputs[0]);
  if (!axis || (*axis != (s.batch > 0 ? 2 : 1) && *axis != -2) || !fs ||
      r.dims(sum->inputs[0]) != roles.dims({s.heads, s.dk, s.dv})) {
    return -1;
  }
  int k = pick_pair(
      *fs,
      [&](const Factor& f) {
        return scan_input_index(site, f.source) >= 0 &&
               r.dims(f.source) == roles.dims({s.heads, s.dk}) &&
               r.placed(f, roles.at({0, 1}));
      },
      [&](const Factor& f) {
        return f.source == s_prev && r.placed(f, roles.at({0, 1, 2}));
      });
  return k < 0 ? -1 : scan_input_index(site, (*fs)[k].source);
}

// k_t ⊗ (β_t · (v_t − Sᵀk_t)) in any grouping: sets k, v and beta.
bool match_delta_update(const ScanSite& site, const ProductReader& r,
                        ValueId value, LinearRoles& roles) {
  const MatrixState& s = roles.state;
  std::optional<std::vector<Factor>> fs = r.factors(value);
  if (!fs || fs->size() != 3) return false;
  const Factor* error = nullptr;
  for (const Factor& f : *fs) {
    const int index = scan_input_index(site, f.source);
    if (index >= 0 && r.dims(f.source) == roles.dims({s.heads, s.dk}) &&
        r.placed(f, roles.at({0, 1})) && roles.k < 0) {
      roles.k = index;
    } else if (index >= 0 &&
               placed_as(r, f, roles.dims({s.heads}), roles.at({0})) &&
               roles.beta < 0) {
      roles.beta = index;
    } else if (index < 0 && error == nullptr &&
               r.dims(f.source) == roles.dims({s.heads, s.dv}) &&
               r.placed(f, roles.at({0, 2}))) {
      error = &f;
    } else {
      return false;
    }
  }
  if (roles.k < 0 || roles.beta < 0 || error == nullptr) return false;
  const Node* sub = r.producer(error->source, "Sub");
  if (sub == nullptr || sub->inputs.size() != 2) return false;
  const ValueId v = r.before_views(sub->inputs[0]);
  roles.v = scan_input_index(site, v);
  return roles.v >= 0 && r.dims(v) == roles.dims({s.heads, s.dv}) &&
         match_state_times_key(site, r, sub->inputs[1], roles) == roles.k;
}

std::optional<LinearRoles> match_body(const ScanSite& site) {
  const Graph& body = site.body;
  ProductReader r(body);
  std::optional<StateUpdate> update = match_state_update(site, r, 5, 3, 4);
  if (!update) return std::nullopt;
  const std::vector<int64_t>* state = &update->state;
  const Node* add = update->add;
  const size_t off = state->size() - 3;
  const MatrixState dims{off == 1 ? (*state)[0] : 0, (*state)[off],
                         (*state)[off + 1], (*state)[off + 2]};
  for (int first : {0, 1}) {
    const ValueId decayed = add->inputs[first], update = add->inputs[1 - first];
    LinearRoles roles;
    roles.state = dims;
    if (r.before_views(decayed) == body.inputs[0]) {
      roles.delta = true;
      if (!match_delta_update(site, r, update, roles)) continue;
    } else if (!match_gated_decay(site, r, decayed, roles) ||
               !match_key_value(site, r, update, roles)) {
      continue;
    }
    roles.q = match_matrix_readout(site, r, dims);
    const int extra = roles.delta ? roles.beta : roles.gate;
    std::set<int> used = {roles.q, roles.k, roles.v, extra};
    if (roles.q >= 0 && used.size() == 4) return roles;
  }
  return std::nullopt;
}

// (T,[Bt],H,…) -> (Bt,T,H·…): the step axis after the batch, heads packed.
ValueId packed(Graph& graph, std::vector<Node>& add, ValueId x, bool batched,
               size_t rank, const std::string& name) {
  if (batched) {
    std::vector<int64_t> perm = {1, 0};
    for (size_t a = 2; a < rank; ++a) perm.push_back(static_cast<int64_t>(a));
    x = add_op(graph, add, "Transpose", {x}, {{"perm", Attribute(perm)}},
               name + "_t");
  } else {
    x = add_op(graph, add, "Unsqueeze",
               {x, add_ints_constant(graph, name + "_axes", {0})}, {},
               name + "_b");
  }
  // Reshape copies dims given as 0: no size of a symbolic dim is written.
  return add_op(graph, add, "Reshape",
                {x, add_ints_constant(graph, name + "_shape", {0, 0, -1})}, {},
                name);
}

void build(const LinearRoles& roles, const std::string& name, Graph& graph,
           const std::vector<ValueId>& inputs,
           const std::vector<ValueId>& outputs, std::vector<Node>& add) {
  const MatrixState& s = roles.state;
  const bool batched = s.batch > 0;
  const size_t rank = batched ? 4 : 3;  // of q, k, v with the step axis
  ValueId q = packed(graph, add, inputs[roles.q], batched, rank, name + "_q");
  ValueId k = packed(graph, add, inputs[roles.k], batched, rank, name + "_k");
  ValueId v = packed(graph, add, inputs[roles.v], batched, rank, name + "_v");
  ValueId decay = kNoValue, beta = kNoValue;
  if (!roles.delta) {
    ValueId g = inputs[roles.gate];
    if (!roles.gate_is_log) {
      g = add_op(graph, add, "Log", {g}, {}, name + "_log_gate");
    }
    decay = packed(graph, add, g, batched,
                   (roles.gate_per_key ? 3 : 2) + (batched ? 1 : 0),
                   name + "_decay");
  } else {
    beta = packed(graph, add, inputs[roles.beta], batched, batched ? 3 : 2,
                  name + "_beta");
  }
  ValueId past = inputs[0];
  if (!batched) {
    past = add_op(graph, add, "Unsqueeze",
                  {past, add_ints_constant(graph, name + "_S0_axes", {0})}, {},
                  name + "_S0");
  }
  ValueId y = add_fresh_value(graph, name + "_y");
  Node node{
      name, "LinearAttention", kOnnxDomain, {q, k, v, past, decay, beta}, {y}};
  node.attrs = {{"q_num_heads", Attribute(s.heads)},
                {"kv_num_heads", Attribute(s.heads)},
                {"update_rule", Attribute(roles.delta ? "delta" : "gated")},
                {"scale", Attribute(1.0f)}};
  ValueId present = kNoValue;
  if (outputs[0] != kNoValue) {
    present = batched ? outputs[0] : add_fresh_value(graph, name + "_state");
    node.outputs.push_back(present);
  }
  add.push_back(std::move(node));
  ValueId heads = add_op(
      graph, add, "Reshape",
      {y, add_ints_constant(graph, name + "_o_shape", {0, 0, s.heads, s.dv})},
      {}, name + "_o_heads");
  restore_layout(
      graph, add, heads, !batched,
      batched ? std::vector<int64_t>{1, 0, 2, 3} : std::vector<int64_t>{},
      outputs[1], name + "_o_steps");
  if (present != kNoValue && !batched) {
    restore_layout(graph, add, present, true, {}, outputs[0], name + "_S_last");
  }
}

}  // namespace

std::optional<ScanLift> recognise_linear_attention(const ScanSite& site) {
  std::optional<LinearRoles> roles = match_body(site);
  if (!roles) return std::nullopt;
  const MatrixState& s = roles->state;
  ScanLift lift;
  lift.op =
      fmt::format("LinearAttention ({})", roles->delta ? "delta" : "gated");
  lift.summary = fmt::format(
      "{}H {}, state {}x{}{}",
      s.batch > 0 ? fmt::format("batch {}, ", s.batch) : std::string(), s.heads,
      s.dk, s.dv,
      roles->delta          ? ""
      : roles->gate_per_key ? ", gate per key"
                            : ", gate per head");
  lift.fills.assign(site.scan.inputs.size(), InputFill::kNormal);
  // A gate a_t read as it is must be positive (its log is the decay).
  if (!roles->delta && !roles->gate_is_log) {
    lift.fills[roles->gate] = InputFill::kStep;
  }
  const std::string name = site.scan.name.empty() ? "scan" : site.scan.name;
  lift.build = [roles = *roles, name](Graph& graph,
                                      const std::vector<ValueId>& inputs,
                                      const std::vector<ValueId>& outputs,
                                      std::vector<Node>& add) {
    build(roles, name, graph, inputs, outputs, add);
  };
  return lift;
}

}  // namespace seqrt
