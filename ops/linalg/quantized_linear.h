// The weight-only quantized form of seqrt::Linear, the one layout every
// quantized weight in seqrt takes (the MatMulNBits importer writes it):
//   W            u8 (N, ceil(K·bits/8)): row n holds the K codes of output
//                channel n; bits=4 packs element k into byte k/2, the low
//                nibble when k is even (ONNX's int4 order, MatMulNBits');
//                bits=8 is one code per byte.
//   W_scale      f32 (N, n_blocks), n_blocks = ceil(K / block_size)
//   W_zero_point u8 (N, n_blocks), one code per entry; absent means
//                2^(bits-1), which makes symmetric signed weights exact.
//   W_real[k, n] = (code(n, k) − zp(n, k/block)) · scale(n, k/block)
// The last block is short when block_size does not divide K.
// activation_bits = 8 (MatMulNBits' accuracy_level 4, `seqrt quantize
// --activations int8`) computes with int8 activations: each row of X is
// quantized per block of K, as onnxruntime's int8 compute does,
//   xs = max|x| / 127 over the block,  xq = round_half_even(x · (1 / xs))
// (xq = 0 where xs = 0), and each block's dot product is exact in integers:
//   Y[n] = Σ_b W_scale(n, b) · xs_b · Σ_{k in b} (code(n, k) − zp) · xq_k.
// A block holding NaN or ±inf gets a NaN scale, so its row's Y is NaN.
// The default 0 keeps X in floating point. Inference,
// the reference kernel and the CPU kernel all check a node through
// check_quantized_linear, so they reject the same nodes with the same text.
#pragma once

#include <cstdint>

#include "ops/op_context.h"

namespace seqrt {

// Input indices of seqrt::Linear.
enum LinearInput : size_t {
  kLinearX = 0,
  kLinearW = 1,
  kLinearB = 2,
  kLinearWScale = 3,
  kLinearWZeroPoint = 4,
  kLinearInputCount = 5,
};

// Bytes of one W row holding `k` codes of `bits` bits.
inline int64_t quantized_row_bytes(int64_t k, int64_t bits) {
  return (k * bits + 7) / 8;
}

// The code of element `k` of a packed W row.
inline uint8_t quantized_code(const uint8_t* row, int64_t k, int64_t bits) {
  if (bits == 8) return row[k];
  uint8_t byte = row[k / 2];
  return (k % 2 == 0) ? (byte & 0x0F) : (byte >> 4);
}

// 2^(bits-1): the zero point when W_zero_point is absent.
inline uint8_t default_zero_point(int64_t bits) {
  return static_cast<uint8_t>(1u << (bits - 1));
}

// The named sizes of a checked quantized Linear; -1 where inference only
// knows a symbol.
struct QuantizedLinearDims {
  int64_t n = -1;
  int64_t k = 0;
  int64_t bits = 0;
  int64_t block_size = 0;
  int64_t n_blocks = 0;
  int64_t row_bytes = 0;
  int64_t activation_bits = 0;  // seqrt::Linear only: 0 or 8
};

// One block of a row of X as int8 codes (`count` of them into `codes`),
// returning its scale xs: the one rounding every kernel shares.
float quantize_activation_block(const float* x, int64_t count, int8_t* codes);

// What the check needs of each input: its dtype and, when known, its shape.
struct LinearOperand {
  bool present = false;
  DType dtype = DType::kUndefined;
  const Shape* shape = nullptr;  // null: unknown rank
};

// The attributes (bits 4/8, block_size, K) and the weight operands W,
// W_scale and W_zero_point of any op that holds a quantized weight
// (seqrt::Linear, seqrt::QuantizedGather), with errors naming the node.
Result<QuantizedLinearDims> check_quantized_weight(const OpContext& ctx,
                                                   const LinearOperand& w,
                                                   const LinearOperand& scale,
                                                   const LinearOperand& zp);

// The `bits` attribute: 0 (a float Linear), 4 or 8.
int64_t linear_bits(const OpContext& ctx);
// The `activation_bits` attribute: 0 (float X) or 8.
int64_t linear_activation_bits(const OpContext& ctx);

// Checks the quantized form (bits 4 or 8): attributes, dtypes (X f32/f16/
// bf16, W u8, B X's dtype, W_scale f32, W_zero_point u8) and every known
// dim, with errors naming the node and the input.
Result<QuantizedLinearDims> check_quantized_linear(
    const OpContext& ctx, const LinearOperand (&in)[kLinearInputCount]);
// The same check of a kernel's input tensors.
Result<QuantizedLinearDims> check_quantized_linear(const KernelContext& ctx);

}  // namespace seqrt
