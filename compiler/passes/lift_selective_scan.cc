// Recognises Mamba-1's selective scan (and S4D-style diagonal SSMs) written
// as a Scan body, per step t with scan inputs u_t (D), delta_t (D),
// B_t (N), C_t (N), state h (D,N) and a constant A (D,N):
//   h'  = Exp(delta_t[:,None] · A) · h + delta_t[:,None] · u_t[:,None] ·
//   B_t[None,:] y_t = ReduceSum(h' · C_t[None,:], axis 1)      (or MatMul(h',
//   C_t))
// in any operand order and grouping, broadcasts by Unsqueeze or Reshape
// (recurrence_factors.h); or all of it with a leading batch axis (u_t
// (Bt,D), h (Bt,D,N), …; A stays (D,N)). It becomes seqrt::SelectiveScan
// (delta_softplus 0) over u, delta (Bt,D,L), Bm, Cm (Bt,1,N,L) and
// past_state (Bt,D,N), Bt = 1 without a batch axis.
#include <fmt/format.h>

#include <set>

#include "compiler/passes/lift_scan_recurrences.h"
#include "compiler/passes/rewrite.h"

namespace seqrt {
namespace {

// Body input indices of the roles, A and the sizes (batch 0: no batch
// axis).
struct SelectiveRoles {
  int u = -1, delta = -1, b = -1, c = -1;
  Tensor a;
  std::string a_name;  // of the outer constant the body captures, if so
  int64_t batch = 0, d = 0, n = 0;

  std::vector<int> at(std::vector<int> placement) const {
    return with_batch_axis(batch > 0, std::move(placement));
  }
  std::vector<int64_t> state() const { return with_batch_dim(batch, {d, n}); }
};

// A (D,N), or with leading axes of size 1 (an export's A[None]).
bool is_a(const std::vector<int64_t>& dims, const SelectiveRoles& roles) {
  if (dims.size() < 2 || dims[dims.size() - 2] != roles.d ||
      dims.back() != roles.n) {
    return false;
  }
  for (size_t i = 0; i + 2 < dims.size(); ++i) {
    if (dims[i] != 1) return false;
  }
  return true;
}

// Where A's axes sit in the product: its (D,N) after the batch axis.
std::vector<int> a_placement(size_t rank, int off) {
  std::vector<int> placement(rank, 0);  // leading axes of size 1: anywhere
  placement[rank - 2] = off;
  placement[rank - 1] = off + 1;
  return placement;
}

// Exp(delta·A)·h_prev: sets delta and A.
bool match_decay(const ScanSite& site, const ProductReader& r, ValueId value,
                 SelectiveRoles& roles) {
  const ValueId h_prev = site.body.inputs[0];
  std::optional<std::vector<Factor>> fs = r.factors(value);
  if (!fs) return false;
  int h = pick_pair(
      *fs,
      [&](const Factor& f) {
        return f.source == h_prev && r.placed(f, roles.at({0, 1}));
      },
      [&](const Factor& f) {
        return r.producer(f.source, "Exp") != nullptr &&
               r.placed(f, roles.at({0, 1})) &&
               r.dims(f.source) == roles.state();
      });
  if (h < 0) return false;
  const Node* exp = r.producer((*fs)[1 - h].source, "Exp");
  std::optional<std::vector<Factor>> inner = r.factors(exp->inputs[0]);
  if (!inner) return false;
  // A (D,N) is shared by the batch: its axes sit after the batch axis.
  const int off = roles.batch > 0 ? 1 : 0;
  int delta = pick_pair(
      *inner,
      [&](const Factor& f) {
        return scan_input_index(site, f.source) >= 0 &&
               r.placed(f, roles.at({0}));
      },
      [&](const Factor& f) {
        const Tensor* a = body_constant(site, f.source);
        return a != nullptr && is_a(a->dims(), roles) &&
               r.placed(f, a_placement(a->dims().size(), off));
      });
  if (delta < 0) return false;
  roles.delta = scan_input_index(site, (*inner)[delta].source);
  const ValueId a = (*inner)[1 - delta].source;
  Result<Tensor> a_dn = body_constant(site, a)->reshaped({roles.d, roles.n});
  if (!a_dn.is_ok()) return false;
  roles.a = *a_dn;
  // The outer A itself serves when it is (D,N) already.
  if (site.body.constant(a) == nullptr &&
      body_constant(site, a)->dims().size() == 2) {
    roles.a_name = site.body.value(a).name;
  }
  return true;
}

// delta·u·B in any grouping: sets u and B.
bool match_input(const ScanSite& site, const ProductReader& r, ValueId value,
                 SelectiveRoles& roles) {
  std::optional<std::vector<Factor>> fs = r.factors(value);
  if (!fs || fs->size() != 3) return false;
  int delta_count = 0;
  for (const Factor& f : *fs) {
    int index = scan_input_index(site, f.source);
    if (index < 0) return false;
    const bool on_d = r.placed(f, roles.at({0}));
    if (index == roles.delta && on_d && delta_count++ == 0) continue;
    if (on_d && roles.u < 0) {
      roles.u = index;
    } else if (r.placed(f, roles.at({1})) && roles.b < 0) {
      roles.b = index;
    } else {
      return false;
    }
  }
  return delta_count == 1 && roles.u >= 0 && roles.b >= 0;
}

// y_t = Σ_n h'[…, n]·C_t[n]: sets C.
bool match_readout(const ScanSite& site, const ProductReader& r,
                   SelectiveRoles& roles) {
  const ValueId h_new = site.body.outputs[0];
  const ValueId y = site.body.outputs[1];
  if (r.dims(y) != with_batch_dim(roles.batch, {roles.d})) return false;
  const ValueId reduced = r.before_views(y);
  auto is_c = [&](const Factor& f) {
    return scan_input_index(site, f.source) >= 0 && r.placed(f, roles.at({1}));
  };
  // The new state, or what it views (an export's no-op Cast).
  auto is_h_new = [&](ValueId id) {
    return r.before_views(id) == r.before_views(h_new);
  };
  auto is_state = [&](const Factor& f) {
    return is_h_new(f.source) && r.placed(f, roles.at({0, 1}));
  };
  if (const Node* sum = r.producer(reduced, "ReduceSum")) {
    std::optional<int64_t> axis = reduced_axis(r, *sum);
    const int64_t n_axis = roles.batch > 0 ? 2 : 1;
    if (!axis || (*axis != n_axis && *axis != -1) ||
        r.dims(sum->inputs[0]) != roles.state()) {
      return false;
    }
    std::optional<std::vector<Factor>> fs = r.factors(sum->inputs[0]);
    int c = fs ? pick_pair(*fs, is_c, is_state) : -1;
    if (c >= 0) roles.c = scan_input_index(site, (*fs)[c].source);
  } else if (const Node* mm = r.producer(reduced, "MatMul")) {
    // h'·C_t with C_t (N) or (N,1); (Bt,N,1) with a batch axis.
    std::optional<std::vector<Factor>> fs = r.factors(mm->inputs[1]);
    if (!is_h_new(mm->inputs[0]) || !fs || fs->size() != 1 ||
        scan_input_index(site, (*fs)[0].source) < 0 ||
        !r.placed((*fs)[0], roles.at({0}))) {
      return false;
    }
    roles.c = scan_input_index(site, (*fs)[0].source);
  }
  return roles.c >= 0;
}

std::optional<SelectiveRoles> match_body(const ScanSite& site) {
  ProductReader r(site.body);
  std::optional<StateUpdate> update = match_state_update(site, r, 5, 2, 3);
  if (!update) return std::nullopt;
  const std::vector<int64_t>* state = &update->state;
  const Node* add = update->add;
  for (int first : {0, 1}) {
    SelectiveRoles roles;
    roles.batch = state->size() == 3 ? (*state)[0] : 0;
    roles.d = (*state)[state->size() - 2];
    roles.n = state->back();
    if (!match_decay(site, r, add->inputs[first], roles) ||
        !match_input(site, r, add->inputs[1 - first], roles) ||
        !match_readout(site, r, roles)) {
      continue;
    }
    std::set<int> used = {roles.u, roles.delta, roles.b, roles.c};
    if (used.size() == 4) return roles;
  }
  return std::nullopt;
}

void build(const SelectiveRoles& roles, const std::string& name, Graph& graph,
           const std::vector<ValueId>& inputs,
           const std::vector<ValueId>& outputs, std::vector<Node>& add) {
  // (L,D) -> (1,D,L), (L,N) -> (1,1,N,L), (D,N) -> (1,D,N); with a batch
  // axis (L,Bt,D) -> (Bt,D,L), (L,Bt,N) -> (Bt,1,N,L), the state as it is.
  const bool batched = roles.batch > 0;
  const std::vector<int64_t> time_last =
      batched ? std::vector<int64_t>{1, 2, 0} : std::vector<int64_t>{1, 0};
  const std::vector<int64_t> channels =
      batched ? std::vector<int64_t>{} : std::vector<int64_t>{0};
  const std::vector<int64_t> groups =
      batched ? std::vector<int64_t>{1} : std::vector<int64_t>{0, 1};
  ValueId u =
      move_time(graph, add, inputs[roles.u], time_last, channels, name + "_u");
  ValueId delta = move_time(graph, add, inputs[roles.delta], time_last,
                            channels, name + "_delta");
  ValueId bm =
      move_time(graph, add, inputs[roles.b], time_last, groups, name + "_B");
  ValueId cm =
      move_time(graph, add, inputs[roles.c], time_last, groups, name + "_C");
  // The outer A itself when the body captured it, else a copy of the
  // body's own.
  ValueId a = roles.a_name.empty() ? kNoValue : graph.find_value(roles.a_name);
  if (a == kNoValue || graph.constant(a) == nullptr) {
    a = add_tensor_constant(graph, name + "_A", roles.a);
  }
  ValueId past = inputs[0];
  if (!batched) {
    past = add_op(graph, add, "Unsqueeze",
                  {past, add_ints_constant(graph, name + "_h0_axes", {0})}, {},
                  name + "_h0");
  }
  ValueId y = add_fresh_value(graph, name + "_y");
  Node scan{name,
            "SelectiveScan",
            kSeqrtDomain,
            {u, delta, a, bm, cm, kNoValue, kNoValue, kNoValue, past},
            {y}};
  scan.attrs = {{"delta_softplus", Attribute(int64_t{0})}};
  ValueId present = kNoValue;
  if (outputs[0] != kNoValue) {
    present = batched ? outputs[0] : add_fresh_value(graph, name + "_state");
    scan.outputs.push_back(present);
  }
  add.push_back(std::move(scan));
  restore_layout(
      graph, add, y, !batched,
      batched ? std::vector<int64_t>{2, 0, 1} : std::vector<int64_t>{1, 0},
      outputs[1], name + "_y_steps");
  if (present != kNoValue && !batched) {
    restore_layout(graph, add, present, true, {}, outputs[0], name + "_h_last");
  }
}

}  // namespace

std::optional<ScanLift> recognise_selective_scan(const ScanSite& site) {
  std::optional<SelectiveRoles> roles = match_body(site);
  if (!roles) return std::nullopt;
  ScanLift lift;
  lift.op = "seqrt::SelectiveScan";
  lift.summary = roles->batch > 0
                     ? fmt::format("batch {}, D {}, N {}", roles->batch,
                                   roles->d, roles->n)
                     : fmt::format("D {}, N {}", roles->d, roles->n);
  lift.fills.assign(site.scan.inputs.size(), InputFill::kNormal);
  lift.fills[roles->delta] = InputFill::kStep;
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
