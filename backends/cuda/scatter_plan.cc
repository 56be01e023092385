#include "backends/cuda/scatter_plan.h"

#include <algorithm>
#include <numeric>

#include "ops/shape/scatter.h"

namespace seqrt::cuda {

ScatterGroups group_scatter(const ScatterPlan& plan) {
  const std::vector<int64_t>& offsets = plan.offsets;
  std::vector<int64_t> by_target(offsets.size());
  std::iota(by_target.begin(), by_target.end(), int64_t{0});
  // Stable: within a destination the updates stay in node order.
  std::stable_sort(by_target.begin(), by_target.end(),
                   [&](int64_t a, int64_t b) {
                     return offsets[static_cast<size_t>(a)] <
                            offsets[static_cast<size_t>(b)];
                   });
  std::vector<int64_t> targets, starts, order;
  const bool last_only = plan.reduction == ScatterReduction::kNone;
  for (size_t k = 0; k < by_target.size(); ++k) {
    const int64_t offset = offsets[static_cast<size_t>(by_target[k])];
    const bool opens = targets.empty() || targets.back() != offset;
    if (opens) {
      targets.push_back(offset);
      starts.push_back(static_cast<int64_t>(order.size()));
    }
    if (last_only && !opens) {
      order.back() = by_target[k];
    } else {
      order.push_back(by_target[k]);
    }
  }
  starts.push_back(static_cast<int64_t>(order.size()));
  ScatterGroups groups;
  groups.groups = static_cast<int64_t>(targets.size());
  groups.packed = std::move(targets);
  groups.packed.insert(groups.packed.end(), starts.begin(), starts.end());
  groups.packed.insert(groups.packed.end(), order.begin(), order.end());
  return groups;
}

ScatterCombine scatter_combine_of(const ScatterPlan& plan) {
  switch (plan.reduction) {
    case ScatterReduction::kAdd:
      return ScatterCombine::kAdd;
    case ScatterReduction::kMul:
      return ScatterCombine::kMul;
    case ScatterReduction::kMax:
      return ScatterCombine::kMax;
    case ScatterReduction::kMin:
      return ScatterCombine::kMin;
    case ScatterReduction::kNone:
      break;
  }
  return ScatterCombine::kReplace;
}

int64_t scatter_blocks(int64_t elements) {
  if (elements <= 0) return 0;
  return std::min<int64_t>(65535, (elements + 255) / 256);
}

}  // namespace seqrt::cuda
