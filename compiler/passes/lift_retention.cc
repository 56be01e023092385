// Recognises a retention / linear-attention state recurrence written as a
// Scan body, per step t with scan inputs q_t, k_t (H,dk), v_t (H,dv), state
// S (H,dk,dv) and a constant per-head decay gamma (H):
//   S'  = gamma[:,None,None] · S + k_t[:,:,None] · v_t[:,None,:]
//         (the outer product also as MatMul of the Unsqueezed k and v)
//   o_t = MatMul(q_t[:,None,:], S') viewed as (H,dv)
//         (or ReduceSum(q_t[:,:,None] · S', axis 1))
// It becomes seqrt::Retention with `gammas` from the constant and scale 1
// (Retention scales K), over (1,H,T,d) views of the (T,H,d) inputs.
#include <fmt/format.h>

#include <set>

#include "compiler/passes/lift_scan_recurrences.h"
#include "compiler/passes/rewrite.h"

namespace seqrt {
namespace {

struct RetentionRoles {
  int q = -1, k = -1, v = -1;
  std::vector<float> gammas;
  int64_t heads = 0, dk = 0, dv = 0;
};

// gamma·S_prev, gamma a constant with H values along axis 0: sets gammas.
bool match_decay(const ScanSite& site, const ProductReader& r, ValueId value,
                 RetentionRoles& roles) {
  const ValueId s_prev = site.body.inputs[0];
  std::optional<std::vector<Factor>> fs = r.factors(value);
  if (!fs) return false;
  auto is_gamma = [&](const Factor& f) {
    const Tensor* gamma = body_constant(site, f.source);
    if (gamma == nullptr || gamma->num_elements() != roles.heads) return false;
    // Its one axis of H values lands on the heads axis.
    std::vector<int> placement(gamma->rank(), -1);
    for (size_t j = 0; j < gamma->rank(); ++j) {
      if (gamma->dim(j) != 1) placement[j] = 0;
    }
    return r.placed(f, placement);
  };
  int s = pick_pair(
      *fs,
      [&](const Factor& f) {
        return f.source == s_prev && r.placed(f, {0, 1, 2});
      },
      is_gamma);
  if (s < 0) return false;
  const Tensor& gamma = *body_constant(site, (*fs)[1 - s].source);
  roles.gammas.clear();
  for (int64_t h = 0; h < roles.heads; ++h) {
    double g = gamma.element_f64(h);
    if (!(g >= 0.0 && g <= 1.0)) return false;  // Retention's domain
    roles.gammas.push_back(static_cast<float>(g));
  }
  return true;
}

// k_t ⊗ v_t per head: sets k and v.
bool match_input(const ScanSite& site, const ProductReader& r, ValueId value,
                 RetentionRoles& roles) {
  std::optional<std::vector<Factor>> fs = r.factors(value);
  if (!fs) return false;
  auto is_k = [&](const Factor& f) {
    return scan_input_index(site, f.source) >= 0 &&
           r.dims(f.source) == std::vector<int64_t>{roles.heads, roles.dk} &&
           r.placed(f, {0, 1});
  };
  auto is_v = [&](const Factor& f) {
    return scan_input_index(site, f.source) >= 0 &&
           r.dims(f.source) == std::vector<int64_t>{roles.heads, roles.dv} &&
           r.placed(f, {0, 2});
  };
  int k = pick_pair(*fs, is_k, is_v);
  if (k < 0) return false;
  roles.k = scan_input_index(site, (*fs)[k].source);
  roles.v = scan_input_index(site, (*fs)[1 - k].source);
  return true;
}

// o_t = q_t·S' per head: sets q.
bool match_readout(const ScanSite& site, const ProductReader& r,
                   RetentionRoles& roles) {
  const ValueId s_new = site.body.outputs[0];
  const ValueId o = site.body.outputs[1];
  const std::vector<int64_t> q_dims = {roles.heads, roles.dk};
  if (r.dims(o) != std::vector<int64_t>{roles.heads, roles.dv}) return false;
  const ValueId product = r.before_views(o);
  auto is_q = [&](const Factor& f, std::vector<int> placement) {
    return scan_input_index(site, f.source) >= 0 &&
           r.dims(f.source) == q_dims && r.placed(f, placement);
  };
  if (const Node* mm = r.producer(product, "MatMul")) {
    // (H,1,dk)·(H,dk,dv) -> (H,1,dv).
    std::optional<std::vector<Factor>> fs = r.factors(mm->inputs[0]);
    if (mm->inputs[1] != s_new || !fs || fs->size() != 1 ||
        r.dims(mm->inputs[0]) !=
            std::vector<int64_t>{roles.heads, 1, roles.dk} ||
        !is_q((*fs)[0], {0, 2})) {
      return false;
    }
    roles.q = scan_input_index(site, (*fs)[0].source);
    return true;
  }
  const Node* sum = r.producer(product, "ReduceSum");
  if (sum == nullptr ||
      r.dims(sum->inputs[0]) !=
          std::vector<int64_t>{roles.heads, roles.dk, roles.dv}) {
    return false;
  }
  std::optional<std::vector<int64_t>> axes;
  if (sum->inputs.size() > 1 && sum->inputs[1] != kNoValue) {
    axes = r.ints(sum->inputs[1]);
  } else if (const Attribute* attr = sum->attr("axes")) {
    axes = attr->as_ints();
  }
  if (!axes || axes->size() != 1 || ((*axes)[0] != 1 && (*axes)[0] != -2)) {
    return false;
  }
  std::optional<std::vector<Factor>> fs = r.factors(sum->inputs[0]);
  if (!fs) return false;
  int q = pick_pair(
      *fs,
      [&](const Factor& f) {
        return is_q(f, {0, 1});
      },
      [&](const Factor& f) {
        return f.source == s_new && r.placed(f, {0, 1, 2});
      });
  if (q < 0) return false;
  roles.q = scan_input_index(site, (*fs)[q].source);
  return true;
}

std::optional<RetentionRoles> match_body(const ScanSite& site) {
  const Graph& body = site.body;
  if (site.num_states != 1 || body.inputs.size() != 4 ||
      body.outputs.size() != 2) {
    return std::nullopt;
  }
  ProductReader r(body);
  std::optional<std::vector<int64_t>> state = r.dims(body.inputs[0]);
  const Node* add = r.producer(body.outputs[0], "Add");
  if (!state || state->size() != 3 || r.dims(body.outputs[0]) != state ||
      add == nullptr || add->inputs.size() != 2) {
    return std::nullopt;
  }
  for (int first : {0, 1}) {
    RetentionRoles roles;
    roles.heads = (*state)[0];
    roles.dk = (*state)[1];
    roles.dv = (*state)[2];
    if (!match_decay(site, r, add->inputs[first], roles) ||
        !match_input(site, r, add->inputs[1 - first], roles) ||
        !match_readout(site, r, roles)) {
      continue;
    }
    std::set<int> used = {roles.q, roles.k, roles.v};
    if (used.size() == 3) return roles;
  }
  return std::nullopt;
}

void build(const RetentionRoles& roles, const std::string& name, Graph& graph,
           const std::vector<ValueId>& inputs,
           const std::vector<ValueId>& outputs, std::vector<Node>& add) {
  // (T,H,d) -> (1,H,T,d); (H,dk,dv) -> (1,H,dk,dv).
  const std::vector<int64_t> heads_first = {1, 0, 2};
  ValueId q =
      move_time(graph, add, inputs[roles.q], heads_first, 1, name + "_q");
  ValueId k =
      move_time(graph, add, inputs[roles.k], heads_first, 1, name + "_k");
  ValueId v =
      move_time(graph, add, inputs[roles.v], heads_first, 1, name + "_v");
  ValueId past =
      add_op(graph, add, "Unsqueeze",
             {inputs[0], add_ints_constant(graph, name + "_S0_axes", {0})}, {},
             name + "_S0");
  ValueId y = add_fresh_value(graph, name + "_y");
  Node retention{name, "Retention", kSeqrtDomain, {q, k, v, past}, {y}};
  retention.attrs = {{"gammas", Attribute(roles.gammas)},
                     {"scale", Attribute(1.0f)}};
  ValueId present = kNoValue;
  if (outputs[0] != kNoValue) {
    present = add_fresh_value(graph, name + "_state");
    retention.outputs.push_back(present);
  }
  add.push_back(std::move(retention));
  drop_batch(graph, add, y, heads_first, outputs[1], name + "_o_steps");
  if (present != kNoValue) {
    drop_batch(graph, add, present, {}, outputs[0], name + "_S_last");
  }
}

}  // namespace

std::optional<ScanLift> recognise_retention(const ScanSite& site) {
  std::optional<RetentionRoles> roles = match_body(site);
  if (!roles) return std::nullopt;
  ScanLift lift;
  lift.op = "seqrt::Retention";
  lift.summary =
      fmt::format("H {}, state {}x{}", roles->heads, roles->dk, roles->dv);
  lift.fills.assign(site.scan.inputs.size(), InputFill::kNormal);
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
