// com.microsoft GatherBlockQuantized (onnxruntime's MatMulNBitsQuantizer
// with "Gather" among its ops, onnxruntime-genai's model builder: quantized
// embedding tables) imported as seqrt::QuantizedGather
// (ops/linalg/quantized_gather.h), whose table has the quantized Linear's
// layout:
//   data int4/uint4 (N, K), or u8 packed with `bits` 4 (N, K/2; two codes
//   a byte, the low nibble first) or 8 (N, K)
//                           -> W (N, ceil(K·bits/8)) u8, signed codes
//                              shifted by 2^(bits-1) (exact)
//   scales (N, n_blocks) f32/f16/bf16 -> W_scale f32; the output keeps the
//                              scales' dtype (`output_dtype`)
//   zero_points int4/uint4 (N, n_blocks), or u8 packed as the data
//                           -> W_zero_point (N, n_blocks), one code each;
//                              absent: 0 for int4/uint4, 2^(bits-1) for u8
// Only gather_axis 0 with quantize_axis the last (a table of rows
// quantized along each row) is imported; other axes, ranks and weights
// that are not constants are refused, naming the node.
#pragma once

#include "graph/graph.h"
#include "importers/onnx/op_table.h"

namespace seqrt {

Status convert_gather_block_quantized(Node& node, const Graph& graph,
                                      const AddConstantFn& add_constant);

}  // namespace seqrt
