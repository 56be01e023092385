// What the importers of onnxruntime's quantized contrib ops
// (matmul_nbits.cc, gather_block_quantized.cc) share: reading their
// attributes and constant weights, with errors that name the node and op.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "graph/graph.h"

namespace seqrt {

// The int attribute `name`, or `fallback` when absent (an error when there
// is none).
Result<int64_t> contrib_int_attr(
    const Node& node, const char* name,
    std::optional<int64_t> fallback = std::nullopt);

bool has_input(const Node& node, size_t i);

// Input i's value, which must be a constant (an initializer or Constant).
Result<const Tensor*> constant_weight(const Node& node, const Graph& graph,
                                      size_t i, const char* what);

// Float scales (any shape holding N·n_blocks values) as f32 (N, n_blocks).
Result<Tensor> scales_as_f32(const Node& node, const Tensor& scales, int64_t n,
                             int64_t n_blocks);

// `bytes` as a u8 (rows, cols) tensor.
Result<Tensor> u8_tensor(const std::vector<uint8_t>& bytes, int64_t rows,
                         int64_t cols);

}  // namespace seqrt
