// com.microsoft MatMulNBits (what onnxruntime's MatMulNBitsQuantizer and
// onnxruntime-genai's model builder write) imported as one weight-only
// quantized seqrt::Linear (ops/linalg/quantized_linear.h):
//   B (N, n_blocks, blob_size) u8     -> W (N, ceil(K·bits/8)), each row's
//                                        blobs joined and the padding of the
//                                        last block cropped
//   scales (N·n_blocks) f32/f16/bf16  -> W_scale (N, n_blocks) f32
//   zero_points u8, 4-bit packed two per byte, each row padded to a whole
//                                     -> W_zero_point (N, n_blocks), one
//                                        code per entry
//   bias (N)                          -> B
// bits 4 and 8; K, N, block_size kept; accuracy_level 4 (int8 compute,
// which onnxruntime's CPU provider then uses) becomes activation_bits 8,
// any other level keeps X in f32. Float zero points, g_idx other than
// the trivial order, and weights that are not constants are refused.
#pragma once

#include <cstdint>
#include <set>
#include <vector>

#include "graph/graph.h"
#include "importers/onnx/op_table.h"

namespace seqrt {

inline constexpr const char* kMicrosoftDomain = "com.microsoft";

// Rewrites the MatMulNBits `node` of `graph` (whose constants hold its
// weights) into seqrt::Linear, adding the converted weights as constants.
Status convert_matmul_nbits(Node& node, const Graph& graph,
                            const AddConstantFn& add_constant);

// The constants `replaced` (MatMulNBits' original B, scales and zero points,
// which convert_matmul_nbits turned into new constants) that no node,
// subgraph or graph output reads any more are dropped, so an unoptimised
// graph (`seqrt convert` without --optimize) does not carry the weights
// twice.
void drop_replaced_weights(Graph& graph, const std::set<ValueId>& replaced);

// MatMulNBits' zero points (`bits` 4: two per byte, the low nibble first,
// each of the N rows padded to a whole byte; 8: one per byte) as one code
// per entry, (N, n_blocks) row-major. `packed` must hold
// N·ceil(n_blocks·bits/8) bytes (the caller checks).
std::vector<uint8_t> unpack_zero_points(const uint8_t* packed, int64_t n,
                                        int64_t n_blocks, int64_t bits);

// B's rows (N, n_blocks·blob_size bytes) cropped to `row_bytes` each.
std::vector<uint8_t> crop_weight_rows(const uint8_t* blobs, int64_t n,
                                      int64_t blob_row_bytes,
                                      int64_t row_bytes);

}  // namespace seqrt
