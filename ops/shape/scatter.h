// What ScatterND and ScatterElements share: the `reduction` attribute, the
// checked element offsets that updates go to, and the arithmetic of each
// reduction. The reference kernels and the CPU kernels use the same
// checks, so both refuse the same inputs with the same message.
#pragma once

#include <cstdint>
#include <type_traits>
#include <vector>

#include "graph/status.h"
#include "graph/tensor.h"
#include "ops/op_context.h"

namespace seqrt {

enum class ScatterReduction { kNone, kAdd, kMul, kMax, kMin };

// The node's `reduction` ("none", "add", "mul", "max", "min").
Result<ScatterReduction> scatter_reduction(const OpContext& ctx);

// ScatterND: updates slice u (of `slice` elements, row-major over
// indices.shape[:-1]) goes to data elements [offsets[u], offsets[u] + slice).
struct ScatterNdPlan {
  std::vector<int64_t> offsets;
  int64_t slice = 1;
};
Result<ScatterNdPlan> plan_scatter_nd(const OpContext& ctx, const Tensor& data,
                                      const Tensor& indices,
                                      const Tensor& updates);

// ScatterElements: update element i goes to data element offsets[i].
Result<std::vector<int64_t>> plan_scatter_elements(const OpContext& ctx,
                                                   const Tensor& data,
                                                   const Tensor& indices,
                                                   const Tensor& updates,
                                                   int64_t axis);

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
Status scatter_reference(const OpContext& ctx, ScatterReduction reduction,
                         const std::vector<int64_t>& offsets, int64_t slice,
                         const Tensor& updates, Tensor& out);

}  // namespace seqrt
