// `seqrt quantize`'s graph rewrite: every MatMul, Gemm or float Linear
// whose weight is a constant 2-D f32 matrix becomes a weight-only quantized
// seqrt::Linear (ops/linalg/quantized_linear.h: 4- or 8-bit codes in blocks
// along K, an f32 scale per block and output channel, a zero point per
// block unless symmetric); on request, every Gather of rows of a constant
// f32 matrix (an embedding table) becomes seqrt::QuantizedGather, the
// table in the same layout (row n = entry n). The fp32 weight is dropped
// once nothing reads it.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace seqrt {

struct QuantizeOptions {
  int bits = 8;             // 4 or 8
  int64_t block_size = 32;  // ≥ 16, a power of two
  // Codes centred on 2^(bits-1) with no zero point (scale from the largest
  // magnitude); otherwise each block's own range with a zero point.
  bool symmetric = false;
  // Nodes (by node name or weight name) left as they are.
  std::set<std::string> skip;
  // Bits of the output layer (a node whose output is a graph output, such
  // as the vocabulary projection): 0 keeps it in f32.
  int output_layer_bits = 0;
  // Bits of embedding tables (a Gather of rows of a constant f32 matrix,
  // which becomes seqrt::QuantizedGather): 0 keeps them in f32.
  int embedding_bits = 0;
  // 8: the quantized Linears compute with int8 activations (activation_bits,
  // ops/linalg/quantized_linear.h); 0 keeps X in f32.
  int activation_bits = 0;
};

struct QuantizedWeight {
  std::string node;  // the node's name
  int64_t k = 0, n = 0;
  int bits = 0;
  uint64_t bytes_before = 0, bytes_after = 0;  // W (and scales, zero points)
};

struct QuantizeReport {
  std::vector<QuantizedWeight> quantized;
  std::vector<std::string> kept;  // "node: why", per weighted node left alone
  uint64_t parameter_bytes_before = 0, parameter_bytes_after = 0;
};

// Rewrites `graph` (verified and typed); kInvalidArgument for bad options.
Result<QuantizeReport> quantize_weights(Graph& graph,
                                        const QuantizeOptions& options);

}  // namespace seqrt
