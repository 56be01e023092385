// oneDNN matmul primitives for the matmul family (MatMul, Gemm, Linear):
// the problem description that is also the cache key, creation through the
// primitive cache, and execution on plain f32 pointers.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "backends/cpu/onednn/primitive_cache.h"
#include "graph/status.h"

namespace seqrt::cpu::onednn {

// Activations oneDNN applies as an eltwise post-op (seqrt::Linear's).
enum class Activation { kNone, kRelu, kGelu, kGeluTanh, kSigmoid, kSilu };

// Linear's activation attribute; nullopt for a name it does not allow.
std::optional<Activation> parse_activation(const std::string& name);

// dst = act(alpha·(src × weights) + bias + sum_scale·dst), all f32. Dims
// are oneDNN's: equal rank, batch dims first (1 where broadcast).
struct MatmulProblem {
  std::vector<int64_t> src_dims, src_strides;  // strides empty: row-major
  std::vector<int64_t> weights_dims;
  // Empty with packed_weights: the layout oneDNN prefers (format any), for
  // weights reordered once; else the strides of plain weights (empty:
  // row-major).
  std::vector<int64_t> weights_strides;
  bool packed_weights = false;
  std::vector<int64_t> dst_dims;  // row-major
  bool bias = false;              // dims (1, ..., 1, N)
  float alpha = 1.0f;
  float sum_scale = 0.0f;  // 0: no sum post-op
  Activation activation = Activation::kNone;

  std::string key() const;
};

// The primitive for `problem`, from the cache or created into it; an entry
// without a primitive when oneDNN has no implementation for it. `label`
// names the node in errors.
Result<std::shared_ptr<const CachedPrimitive>> matmul_primitive(
    const MatmulProblem& problem, const std::string& label);

// Runs `primitive` (a matmul) on the calling thread's stream. `weights` is
// memory in primitive.weights's layout; `bias` is null when the problem
// has none.
Status execute_matmul(const CachedPrimitive& primitive,
                      const std::string& label, const float* src,
                      const dnnl::memory& weights, const float* bias,
                      float* dst);

}  // namespace seqrt::cpu::onednn
