// ScatterND and ScatterElements on the CUDA backend (and GatherND's one
// line of index math, gather_slice_source): the op's ScatterPlan
// (ops/shape/scatter.h: checked offsets, one per update slice) regrouped
// by destination, so the device applies updates in parallel yet exactly in
// the reference's order. Slices of one plan either coincide or are
// disjoint (ScatterND's are whole trailing blocks of data, ScatterElements'
// single elements), so a group is one destination slice and the updates
// that reach it, in node order; one thread per element of a group's slice
// folds them in that order. Without a reduction only a group's last update
// matters, so only it is kept. The inline apply is the kernels' own code,
// compiled for the host too so the tests check what the device runs.
#pragma once

#include <cstdint>
#include <vector>

#include "backends/cuda/copy_plan.h"

namespace seqrt {
struct ScatterPlan;  // ops/shape/scatter.h
}  // namespace seqrt

namespace seqrt::cuda {

// ScatterReduction as the kernels take it.
enum class ScatterCombine : int { kReplace, kAdd, kMul, kMax, kMin };

// Packed for one upload: targets (groups), starts (groups + 1) and order
// (the update slices of group g are order[starts[g] .. starts[g+1])).
struct ScatterGroups {
  int64_t groups = 0;
  std::vector<int64_t> packed;
  int64_t targets_at() const { return 0; }
  int64_t starts_at() const { return groups; }
  int64_t order_at() const { return 2 * groups + 1; }
};

ScatterGroups group_scatter(const ScatterPlan& plan);
ScatterCombine scatter_combine_of(const ScatterPlan& plan);

// The device's view of the packed groups.
struct ScatterGroupsView {
  const int64_t* targets;
  const int64_t* starts;
  const int64_t* order;
  int64_t groups, slice;
};

// Element i of the groups' slices (i < groups·slice): out's element folds
// in, in order, every update that reaches it. `combine(current, update)`
// is the reduction (kNone: the update).
template <typename T, typename Combine>
SEQRT_HOST_DEVICE inline void scatter_group_apply(const ScatterGroupsView& v,
                                                  int64_t i, const T* updates,
                                                  T* out, Combine combine) {
  const int64_t g = i / v.slice, j = i % v.slice;
  T* dst = out + v.targets[g] + j;
  T value = *dst;
  for (int64_t k = v.starts[g]; k < v.starts[g + 1]; ++k) {
    value = combine(value, updates[v.order[k] * v.slice + j]);
  }
  *dst = value;
}

// GatherND: the data element that output element i copies, slice t =
// i / slice starting at offsets[t] (the op's checked plan, gather_nd.h).
SEQRT_HOST_DEVICE inline int64_t gather_slice_source(const int64_t* offsets,
                                                     int64_t slice, int64_t i) {
  return offsets[i / slice] + i % slice;
}

// Blocks of 256 threads over `elements`, capped at 65535 (kernels loop);
// 0 when there is nothing to do.
int64_t scatter_blocks(int64_t elements);

}  // namespace seqrt::cuda
