// The ONNX quantization ops (QuantizeLinear, DequantizeLinear,
// DynamicQuantizeLinear, MatMulInteger, QLinearMatMul): their reference
// kernels, which the CPU backend also runs as its kernels (plain loops;
// these ops convert weights and small activations), and the scale layout
// the linear ones share.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/tensor.h"
#include "ops/op_context.h"

namespace seqrt {

// How the scale (and zero point) of QuantizeLinear/DequantizeLinear map
// onto x: one for the whole tensor (a scalar or one element), one per
// index of `axis` (1-D, as long as that dim), or one per block of
// `block_size` consecutive indices along `axis` (x's rank, that dim
// ceil(d / block_size), the others equal).
class ScaleLayout {
 public:
  static Result<ScaleLayout> make(const OpContext& ctx,
                                  const std::vector<int64_t>& x_dims,
                                  const std::vector<int64_t>& scale_dims,
                                  int64_t axis, int64_t block_size);
  // The flat scale index of flat x index i.
  int64_t index(int64_t i) const {
    if (per_tensor_) return 0;
    const int64_t a = (i / inner_) % dim_;
    if (block_size_ == 0) return a;
    const int64_t o = i / (inner_ * dim_);
    return (o * blocks_ + a / block_size_) * inner_ + i % inner_;
  }

 private:
  bool per_tensor_ = true;
  int64_t dim_ = 1, inner_ = 1, block_size_ = 0, blocks_ = 1;
};

Status run_quantize_linear(KernelContext& ctx);
Status run_dequantize_linear(KernelContext& ctx);
Status run_dynamic_quantize_linear(KernelContext& ctx);
Status run_matmul_integer(KernelContext& ctx);
Status run_qlinear_matmul(KernelContext& ctx);

}  // namespace seqrt
