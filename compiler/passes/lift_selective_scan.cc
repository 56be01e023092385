// Recognises Mamba-1's selective scan (and S4D-style diagonal SSMs) written
// as a Scan body, per step t with scan inputs u_t (D), delta_t (D),
// B_t (N), C_t (N), state h (D,N) and a constant A (D,N):
//   h'  = Exp(delta_t[:,None] · A) · h + delta_t[:,None] · u_t[:,None] ·
//   B_t[None,:] y_t = ReduceSum(h' · C_t[None,:], axis 1)      (or MatMul(h',
//   C_t))
// in any operand order and grouping, broadcasts by Unsqueeze or Reshape
// (recurrence_factors.h). It becomes seqrt::SelectiveScan (delta_softplus
// 0) over u, delta (1,D,L), Bm, Cm (1,1,N,L) and past_state (1,D,N).
#include <fmt/format.h>

#include <set>

#include "compiler/passes/lift_scan_recurrences.h"
#include "compiler/passes/rewrite.h"

namespace seqrt {
namespace {

// Body input indices of the roles, and A.
struct SelectiveRoles {
  int u = -1, delta = -1, b = -1, c = -1;
  Tensor a;
  int64_t d = 0, n = 0;
};

// Exp(delta·A)·h_prev: sets delta and A.
bool match_decay(const ScanSite& site, const ProductReader& r, ValueId value,
                 SelectiveRoles& roles) {
  const ValueId h_prev = site.body.inputs[0];
  const std::vector<int64_t> state = {roles.d, roles.n};
  std::optional<std::vector<Factor>> fs = r.factors(value);
  if (!fs) return false;
  int h = pick_pair(
      *fs,
      [&](const Factor& f) {
        return f.source == h_prev && r.placed(f, {0, 1});
      },
      [&](const Factor& f) {
        return r.producer(f.source, "Exp") != nullptr && r.placed(f, {0, 1}) &&
               r.dims(f.source) == state;
      });
  if (h < 0) return false;
  const Node* exp = r.producer((*fs)[1 - h].source, "Exp");
  std::optional<std::vector<Factor>> inner = r.factors(exp->inputs[0]);
  if (!inner) return false;
  int delta = pick_pair(
      *inner,
      [&](const Factor& f) {
        return scan_input_index(site, f.source) >= 0 && r.placed(f, {0});
      },
      [&](const Factor& f) {
        const Tensor* a = body_constant(site, f.source);
        return a != nullptr && a->dims() == state && r.placed(f, {0, 1});
      });
  if (delta < 0) return false;
  roles.delta = scan_input_index(site, (*inner)[delta].source);
  roles.a = *body_constant(site, (*inner)[1 - delta].source);
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
    if (index == roles.delta && r.placed(f, {0}) && delta_count++ == 0) {
      continue;
    }
    if (r.placed(f, {0}) && roles.u < 0) {
      roles.u = index;
    } else if (r.placed(f, {1}) && roles.b < 0) {
      roles.b = index;
    } else {
      return false;
    }
  }
  return delta_count == 1 && roles.u >= 0 && roles.b >= 0;
}

// y_t = Σ_n h'[:, n]·C_t[n]: sets C.
bool match_readout(const ScanSite& site, const ProductReader& r,
                   SelectiveRoles& roles) {
  const ValueId h_new = site.body.outputs[0];
  const ValueId y = site.body.outputs[1];
  if (r.dims(y) != std::vector<int64_t>{roles.d}) return false;
  const ValueId reduced = r.before_views(y);
  auto is_c = [&](const Factor& f) {
    return scan_input_index(site, f.source) >= 0 && r.placed(f, {1});
  };
  auto is_state = [&](const Factor& f) {
    return f.source == h_new && r.placed(f, {0, 1});
  };
  std::optional<std::vector<Factor>> fs;
  int c = -1;
  if (const Node* sum = r.producer(reduced, "ReduceSum")) {
    std::optional<std::vector<int64_t>> axes;
    if (sum->inputs.size() > 1 && sum->inputs[1] != kNoValue) {
      axes = r.ints(sum->inputs[1]);
    } else if (const Attribute* attr = sum->attr("axes")) {
      axes = attr->as_ints();
    }
    if (!axes || axes->size() != 1 || ((*axes)[0] != 1 && (*axes)[0] != -1)) {
      return false;
    }
    if (r.dims(sum->inputs[0]) != std::vector<int64_t>{roles.d, roles.n}) {
      return false;
    }
    fs = r.factors(sum->inputs[0]);
    if (fs) c = pick_pair(*fs, is_c, is_state);
    if (c >= 0) roles.c = scan_input_index(site, (*fs)[c].source);
  } else if (const Node* mm = r.producer(reduced, "MatMul")) {
    // h'·C_t with C_t (N) or (N,1).
    fs = r.factors(mm->inputs[1]);
    if (mm->inputs[0] != h_new || !fs || fs->size() != 1 ||
        scan_input_index(site, (*fs)[0].source) < 0 ||
        !r.placed((*fs)[0], {0})) {
      return false;
    }
    roles.c = scan_input_index(site, (*fs)[0].source);
  }
  return roles.c >= 0;
}

std::optional<SelectiveRoles> match_body(const ScanSite& site) {
  const Graph& body = site.body;
  if (site.num_states != 1 || body.inputs.size() != 5 ||
      body.outputs.size() != 2) {
    return std::nullopt;
  }
  ProductReader r(body);
  std::optional<std::vector<int64_t>> state = r.dims(body.inputs[0]);
  const Node* add = r.producer(body.outputs[0], "Add");
  if (!state || state->size() != 2 || r.dims(body.outputs[0]) != state ||
      add == nullptr || add->inputs.size() != 2) {
    return std::nullopt;
  }
  for (int first : {0, 1}) {
    SelectiveRoles roles;
    roles.d = (*state)[0];
    roles.n = (*state)[1];
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
  // (L,D) -> (1,D,L); (L,N) -> (1,1,N,L); (D,N) -> (1,D,N).
  ValueId u = move_time(graph, add, inputs[roles.u], {1, 0}, 1, name + "_u");
  ValueId delta =
      move_time(graph, add, inputs[roles.delta], {1, 0}, 1, name + "_delta");
  ValueId bm = move_time(graph, add, inputs[roles.b], {1, 0}, 2, name + "_B");
  ValueId cm = move_time(graph, add, inputs[roles.c], {1, 0}, 2, name + "_C");
  ValueId a = add_tensor_constant(graph, name + "_A", roles.a);
  ValueId past =
      add_op(graph, add, "Unsqueeze",
             {inputs[0], add_ints_constant(graph, name + "_h0_axes", {0})}, {},
             name + "_h0");
  ValueId y = add_fresh_value(graph, name + "_y");
  Node scan{name,
            "SelectiveScan",
            kSeqrtDomain,
            {u, delta, a, bm, cm, kNoValue, kNoValue, kNoValue, past},
            {y}};
  scan.attrs = {{"delta_softplus", Attribute(int64_t{0})}};
  ValueId present = kNoValue;
  if (outputs[0] != kNoValue) {
    present = add_fresh_value(graph, name + "_state");
    scan.outputs.push_back(present);
  }
  add.push_back(std::move(scan));
  drop_batch(graph, add, y, {1, 0}, outputs[1], name + "_y_steps");
  if (present != kNoValue) {
    drop_batch(graph, add, present, {}, outputs[0], name + "_h_last");
  }
}

}  // namespace

std::optional<ScanLift> recognise_selective_scan(const ScanSite& site) {
  std::optional<SelectiveRoles> roles = match_body(site);
  if (!roles) return std::nullopt;
  ScanLift lift;
  lift.op = "seqrt::SelectiveScan";
  lift.summary = fmt::format("D {}, N {}", roles->d, roles->n);
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
