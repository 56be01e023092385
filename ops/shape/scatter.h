// What ScatterND and ScatterElements share: the `reduction` attribute, the
// checked element offsets that updates go to, and the arithmetic of each
// reduction. The reference kernels and the CPU kernels use the same
// checks, so both refuse the same inputs with the same message. The index
// checks and ScatterND's tuples come from nd_index.h, shared with GatherND.
#pragma once

#include <cstdint>
#include <type_traits>
#include <vector>

#include "graph/status.h"
#include "graph/tensor.h"
#include "ops/op_context.h"

namespace seqrt {

enum class ScatterReduction { kNone, kAdd, kMul, kMax, kMin };

// The inputs of both ops.
enum ScatterInput { kScatterData, kScatterIndices, kScatterUpdates };

// The node's `reduction` ("none", "add", "mul", "max", "min").
Result<ScatterReduction> scatter_reduction(const OpContext& ctx);

// Inference checks both ops share: the reduction is known, indices are
// integers and updates have data's dtype.
Status check_scatter_types(const InferContext& ctx);

// Where a node's updates go, checked: update slice u (of `slice` elements,
// row-major over the updates) combines into data elements [offsets[u],
// offsets[u] + slice). ScatterND's slices are data.shape[k:] for indices'
// last dim k; ScatterElements' are single elements (slice 1).
struct ScatterPlan {
  ScatterReduction reduction = ScatterReduction::kNone;
  std::vector<int64_t> offsets;
  int64_t slice = 1;
};
Result<ScatterPlan> plan_scatter_nd(const KernelContext& ctx);
Result<ScatterPlan> plan_scatter_elements(const KernelContext& ctx);

// Whether `dtype` can take `reduction` (a reduction needs numbers, not
// bool); backends check this before applying a plan.
Status check_scatter_dtype(const OpContext& ctx, ScatterReduction reduction,
                           DType dtype);

// `current` combined with `update` under `reduction` (kNone: the update).
// Integer sums and products wrap, as in C on unsigned types.
template <typename T>
T scatter_combine(ScatterReduction reduction, T current, T update) {
  using Arith = std::conditional_t<std::is_integral_v<T>, uint64_t, T>;
  switch (reduction) {
    case ScatterReduction::kAdd:
      return static_cast<T>(static_cast<Arith>(current) +
                            static_cast<Arith>(update));
    case ScatterReduction::kMul:
      return static_cast<T>(static_cast<Arith>(current) *
                            static_cast<Arith>(update));
    case ScatterReduction::kMax:
      return current < update ? update : current;
    case ScatterReduction::kMin:
      return update < current ? update : current;
    case ScatterReduction::kNone:
      break;
  }
  return update;
}

// The reference arithmetic: out[offsets[i] + j] = combine(out[...],
// updates[i * slice + j]) in double for floats, int64 for integers; in
// order, so the last of duplicate indices wins under kNone.
Status scatter_reference(const OpContext& ctx, const ScatterPlan& plan,
                         const Tensor& updates, Tensor& out);

// The reference kernel of either op given its plan: out = data, then the
// updates applied by scatter_reference.
Status run_scatter_reference(KernelContext& ctx, const ScatterPlan& plan);

}  // namespace seqrt
