// Recognises a retention / linear-attention state recurrence written as a
// Scan body, per step t with scan inputs q_t, k_t (H,dk), v_t (H,dv), state
// S (H,dk,dv) and a constant per-head decay gamma (H):
//   S'  = gamma[:,None,None] · S + k_t[:,:,None] · v_t[:,None,:]
//         (the outer product also as MatMul of the Unsqueezed k and v)
//   o_t = MatMul(q_t[:,None,:], S') viewed as (H,dv)
//         (or ReduceSum(q_t[:,:,None] · S', axis 1))
// or all of it with a leading batch axis (q_t (Bt,H,dk), S (Bt,H,dk,dv)).
// It becomes seqrt::Retention with `gammas` from the constant and scale 1
// (Retention scales K), over (Bt,H,T,d) views of the (T,Bt,H,d) inputs
// (Bt = 1 without a batch axis).
#include <fmt/format.h>

#include <set>

#include "compiler/passes/lift_scan_recurrences.h"
#include "compiler/passes/rewrite.h"

namespace seqrt {
namespace {

struct RetentionRoles {
  int q = -1, k = -1, v = -1;
  std::vector<float> gammas;
  int64_t batch = 0, heads = 0, dk = 0, dv = 0;

  std::vector<int> at(std::vector<int> placement) const {
    return with_batch_axis(batch > 0, std::move(placement));
  }
  std::vector<int64_t> with_batch(std::vector<int64_t> dims) const {
    return with_batch_dim(batch, std::move(dims));
  }
};

// gamma·S_prev, gamma a constant with H values along the heads axis: sets
// gammas.
bool match_decay(const ScanSite& site, const ProductReader& r, ValueId value,
                 RetentionRoles& roles) {
  const ValueId s_prev = site.body.inputs[0];
  const int heads_axis = roles.batch > 0 ? 1 : 0;
  std::optional<std::vector<Factor>> fs = r.factors(value);
  if (!fs) return false;
  auto is_gamma = [&](const Factor& f) {
    const Tensor* gamma = body_constant(site, f.source);
    if (gamma == nullptr || gamma->num_elements() != roles.heads) return false;
    std::vector<int> placement(gamma->rank(), -1);
    for (size_t j = 0; j < gamma->rank(); ++j) {
      if (gamma->dim(j) != 1) placement[j] = heads_axis;
    }
    return r.placed(f, placement);
  };
  int s = pick_pair(
      *fs,
      [&](const Factor& f) {
        return f.source == s_prev && r.placed(f, roles.at({0, 1, 2}));
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
           r.dims(f.source) == roles.with_batch({roles.heads, roles.dk}) &&
           r.placed(f, roles.at({0, 1}));
  };
  auto is_v = [&](const Factor& f) {
    return scan_input_index(site, f.source) >= 0 &&
           r.dims(f.source) == roles.with_batch({roles.heads, roles.dv}) &&
           r.placed(f, roles.at({0, 2}));
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
  roles.q = match_matrix_readout(
      site, r, {roles.batch, roles.heads, roles.dk, roles.dv});
  return roles.q >= 0;
}

std::optional<RetentionRoles> match_body(const ScanSite& site) {
  ProductReader r(site.body);
  std::optional<StateUpdate> update = match_state_update(site, r, 4, 3, 4);
  if (!update) return std::nullopt;
  const std::vector<int64_t>* state = &update->state;
  const Node* add = update->add;
  for (int first : {0, 1}) {
    RetentionRoles roles;
    const size_t off = state->size() - 3;
    roles.batch = off == 1 ? (*state)[0] : 0;
    roles.heads = (*state)[off];
    roles.dk = (*state)[off + 1];
    roles.dv = (*state)[off + 2];
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
  // (T,H,d) -> (1,H,T,d), (H,dk,dv) -> (1,H,dk,dv); with a batch axis
  // (T,Bt,H,d) -> (Bt,H,T,d), the state as it is.
  const bool batched = roles.batch > 0;
  const std::vector<int64_t> heads_first =
      batched ? std::vector<int64_t>{1, 2, 0, 3}
              : std::vector<int64_t>{1, 0, 2};
  const std::vector<int64_t> batch_axis =
      batched ? std::vector<int64_t>{} : std::vector<int64_t>{0};
  ValueId q = move_time(graph, add, inputs[roles.q], heads_first, batch_axis,
                        name + "_q");
  ValueId k = move_time(graph, add, inputs[roles.k], heads_first, batch_axis,
                        name + "_k");
  ValueId v = move_time(graph, add, inputs[roles.v], heads_first, batch_axis,
                        name + "_v");
  ValueId past = inputs[0];
  if (!batched) {
    past = add_op(graph, add, "Unsqueeze",
                  {past, add_ints_constant(graph, name + "_S0_axes", {0})}, {},
                  name + "_S0");
  }
  ValueId y = add_fresh_value(graph, name + "_y");
  Node retention{name, "Retention", kSeqrtDomain, {q, k, v, past}, {y}};
  retention.attrs = {{"gammas", Attribute(roles.gammas)},
                     {"scale", Attribute(1.0f)}};
  ValueId present = kNoValue;
  if (outputs[0] != kNoValue) {
    present = batched ? outputs[0] : add_fresh_value(graph, name + "_state");
    retention.outputs.push_back(present);
  }
  add.push_back(std::move(retention));
  restore_layout(graph, add, y, !batched,
                 batched ? std::vector<int64_t>{2, 0, 1, 3}
                         : std::vector<int64_t>{1, 0, 2},
                 outputs[1], name + "_o_steps");
  if (present != kNoValue && !batched) {
    restore_layout(graph, add, present, true, {}, outputs[0], name + "_S_last");
  }
}

}  // namespace

int match_matrix_readout(const ScanSite& site, const ProductReader& r,
                         const MatrixState& roles) {
  const ValueId s_new = site.body.outputs[0];
  const ValueId o = site.body.outputs[1];
  if (r.dims(o) != with_batch_dim(roles.batch, {roles.heads, roles.dv})) {
    return -1;
  }
  const ValueId product = r.before_views(o);
  auto is_q = [&](const Factor& f, std::vector<int> placement) {
    return scan_input_index(site, f.source) >= 0 &&
           r.dims(f.source) ==
               with_batch_dim(roles.batch, {roles.heads, roles.dk}) &&
           r.placed(f, with_batch_axis(roles.batch > 0, std::move(placement)));
  };
  if (const Node* mm = r.producer(product, "MatMul")) {
    // (H,1,dk)·(H,dk,dv) -> (H,1,dv).
    std::optional<std::vector<Factor>> fs = r.factors(mm->inputs[0]);
    if (mm->inputs[1] != s_new || !fs || fs->size() != 1 ||
        r.dims(mm->inputs[0]) !=
            with_batch_dim(roles.batch, {roles.heads, 1, roles.dk}) ||
        !is_q((*fs)[0], {0, 2})) {
      return -1;
    }
    return scan_input_index(site, (*fs)[0].source);
  }
  const Node* sum = r.producer(product, "ReduceSum");
  if (sum == nullptr ||
      r.dims(sum->inputs[0]) !=
          with_batch_dim(roles.batch, {roles.heads, roles.dk, roles.dv})) {
    return -1;
  }
  std::optional<int64_t> axis = reduced_axis(r, *sum);
  if (!axis || (*axis != (roles.batch > 0 ? 2 : 1) && *axis != -2)) {
    return -1;
  }
  std::optional<std::vector<Factor>> fs = r.factors(sum->inputs[0]);
  if (!fs) return -1;
  int q = pick_pair(
      *fs,
      [&](const Factor& f) {
        return is_q(f, {0, 1});
      },
      [&](const Factor& f) {
        return f.source == s_new &&
               r.placed(f, with_batch_axis(roles.batch > 0, {0, 1, 2}));
      });
  if (q < 0) return -1;
  return scan_input_index(site, (*fs)[q].source);
}

std::optional<ScanLift> recognise_retention(const ScanSite& site) {
  std::optional<RetentionRoles> roles = match_body(site);
  if (!roles) return std::nullopt;
  ScanLift lift;
  lift.op = "seqrt::Retention";
  lift.summary =
      fmt::format("{}H {}, state {}x{}",
                  roles->batch > 0 ? fmt::format("batch {}, ", roles->batch)
                                   : std::string(),
                  roles->heads, roles->dk, roles->dv);
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
