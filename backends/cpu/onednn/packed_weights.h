// Constant weights of a matmul (or a convolution), prepared once at compile
// time: an f32 view of the graph's constant (no copy when it already is f32)
// and one copy reordered into each blocked layout the primitives ask for —
// usually one, made at compile time; a run whose primitive wants another layout
// (a very different M) reorders once more and keeps that copy too.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "graph/status.h"
#include "graph/tensor.h"

namespace seqrt::cpu::onednn {

class PackedWeights {
 public:
  // `plain` is f32 (K, N), or (N, K) read transposed when `transposed`
  // (Gemm's transB); it must stay alive as long as this (it does: the
  // Tensor shares its storage).
  PackedWeights(Tensor plain, bool transposed);
  // Weights of another primitive (a convolution's), f32 and described by
  // `plain_desc`; k() and n() are 0.
  PackedWeights(Tensor plain, const dnnl::memory::desc& plain_desc);

  int64_t k() const { return k_; }
  int64_t n() const { return n_; }
  // The plain f32 weights, (K, N) row-major or (N, K) when transposed().
  const float* plain() const { return plain_.data_as<float>(); }
  bool transposed() const { return transposed_; }

  // The weights as memory of `layout`, reordered from the plain ones the
  // first time this layout is asked for. `label` names the node in errors.
  Result<dnnl::memory> in_layout(const dnnl::memory::desc& layout,
                                 const std::string& label);
  size_t num_layouts() const;

 private:
  Tensor plain_;
  bool transposed_ = false;
  int64_t k_ = 0, n_ = 0;
  dnnl::memory::desc plain_desc_;
  mutable std::mutex mutex_;
  std::vector<std::pair<dnnl::memory::desc, dnnl::memory>> layouts_;
};

// How many weight reorders the process has made (tests check that the
// weights are reordered at compile time, not per run).
int64_t weight_reorder_count();

}  // namespace seqrt::cpu::onednn
