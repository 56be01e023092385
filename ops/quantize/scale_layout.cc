// ScaleLayout: how a QuantizeLinear/DequantizeLinear scale covers x.
#include "ops/quantize/quantize.h"
#include "ops/util.h"

namespace seqrt {

Result<ScaleLayout> ScaleLayout::make(const OpContext& ctx,
                                      const std::vector<int64_t>& x_dims,
                                      const std::vector<int64_t>& scale_dims,
                                      int64_t axis, int64_t block_size) {
  ScaleLayout layout;
  int64_t scale_count = 1;
  for (int64_t d : scale_dims) scale_count *= d;
  if (block_size < 0) {
    return ctx.error("block_size must be >= 0, got {}", block_size);
  }
  if (block_size == 0 && scale_dims.size() <= 1 && scale_count == 1) {
    return layout;  // per tensor
  }
  const auto rank = static_cast<int64_t>(x_dims.size());
  SEQRT_ASSIGN_OR_RETURN(int64_t a, normalize_axis(ctx, axis, rank));
  layout.per_tensor_ = false;
  layout.dim_ = x_dims[a];
  for (int64_t i = a + 1; i < rank; ++i) layout.inner_ *= x_dims[i];
  if (block_size == 0) {
    if (scale_dims.size() != 1 || scale_dims[0] != layout.dim_) {
      return ctx.error(
          "a per-axis scale must be 1-D of length {} (dim {} of x {}), got {}",
          layout.dim_, a, dims_to_string(x_dims), dims_to_string(scale_dims));
    }
    return layout;
  }
  layout.block_size_ = block_size;
  layout.blocks_ = (layout.dim_ + block_size - 1) / block_size;
  std::vector<int64_t> expected = x_dims;
  expected[a] = layout.blocks_;
  if (scale_dims != expected) {
    return ctx.error(
        "a blocked scale (block_size {} on axis {}) of x {} must have dims {}, "
        "got {}",
        block_size, a, dims_to_string(x_dims), dims_to_string(expected),
        dims_to_string(scale_dims));
  }
  return layout;
}

}  // namespace seqrt
