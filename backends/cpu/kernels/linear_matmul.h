// The 2-D matmul the matmul-family kernels (MatMul, Gemm, seqrt::Linear)
// share on oneDNN's matmul primitive: rows × K times K × N with the
// epilogue (scale, bias, accumulate into dst, activation) as post-ops.
// Constant weights are packed at compile time (CpuKernel::prepare) into the
// layout the primitive prefers; other weights are read as they are. A
// single row with at most a bias (a decode token) goes to dnnl_sgemm on the
// plain weights instead, which measured faster there.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "backends/cpu/onednn/matmul.h"
#include "backends/cpu/onednn/packed_weights.h"
#include "graph/graph.h"

namespace seqrt::cpu {

struct MatmulEpilogue {
  const float* bias = nullptr;  // (N), or null
  float alpha = 1.0f;           // scales src × weights
  float sum_scale = 0.0f;       // adds sum_scale · dst (Gemm's beta·C)
  onednn::Activation activation = onednn::Activation::kNone;
};

// The weights of one product: packed (constant, prepared) or plain f32
// (K, N) row-major, or (N, K) when transposed.
struct MatmulWeights {
  onednn::PackedWeights* packed = nullptr;
  const float* plain = nullptr;
  bool transposed = false;
};

// dst (rows, N) = epilogue(src × weights); src is (rows, K) row-major, or
// (K, rows) when `transpose_src`. Shapes are the caller's to check.
Status run_linear_matmul(const std::string& label, const float* src,
                         bool transpose_src, int64_t rows, int64_t k, int64_t n,
                         const MatmulWeights& weights,
                         const MatmulEpilogue& epilogue, float* dst);

// Rows of a product whose src is `value` (all dims but the last), when
// known at compile time; else a typical prompt length, the shape the
// weights are packed for first.
int64_t rows_hint(const Graph& graph, ValueId value);

// Packs the constant `weights` (f32, f16 or bf16; (K, N), or (N, K) when
// `transposed`) for the primitive of a `rows`-row product with or without
// bias and with `activation`; the reorder happens here, at compile time.
Result<std::shared_ptr<onednn::PackedWeights>> pack_constant_weights(
    const std::string& label, const Tensor& weights, bool transposed,
    int64_t rows, bool has_bias, onednn::Activation activation);

}  // namespace seqrt::cpu
