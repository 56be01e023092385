// CPU kernel of Tile, generic over dtypes: each output row repeats its
// input row with memcpy; rows split by row_split.h.
#include <cstring>
#include <vector>

#include "backends/cpu/kernel_table.h"
#include "backends/cpu/kernels/float_support.h"
#include "backends/cpu/kernels/inferred_dims.h"
#include "backends/cpu/kernels/row_split.h"
#include "ops/shape/shape_util.h"
#include "ops/util.h"

namespace seqrt::cpu {
namespace {

Status run_tile(KernelContext& ctx) {
  const Tensor& in = *ctx.input(0);
  SEQRT_ASSIGN_OR_RETURN(std::vector<int64_t> dims, inferred_dims(ctx));
  SEQRT_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocate_output(0, in.dtype(), dims));
  if (out->num_elements() == 0) return Status::ok();
  const size_t element = dtype_size(in.dtype());
  if (in.rank() == 0) {
    std::memcpy(out->mutable_data(), in.data(), element);
    return Status::ok();
  }
  const std::vector<int64_t> strides = strides_of(in.dims());
  const size_t last = in.rank() - 1;
  const int64_t width = in.dim(last);  // one source row
  const int64_t length = dims.back();
  const auto* src = static_cast<const uint8_t*>(in.data());
  auto* dst = static_cast<uint8_t*>(out->mutable_data());
  parallel_chunks(num_rows(dims), row_grain(dims), [&](int64_t b, int64_t e) {
    std::vector<int64_t> coords(dims.size(), 0);
    for (int64_t row = b; row < e; ++row) {
      row_coords(dims, row, coords);
      int64_t base = 0;
      for (size_t d = 0; d < last; ++d) {
        base += (coords[d] % in.dim(d)) * strides[d];
      }
      uint8_t* out_row = dst + static_cast<size_t>(row * length) * element;
      for (int64_t j = 0; j < length; j += width) {
        std::memcpy(out_row + j * element, src + base * element,
                    static_cast<size_t>(width) * element);
      }
    }
  });
  return Status::ok();
}

}  // namespace

void register_tile_kernels(KernelTable& table) {
  table.add(CpuKernel{kOnnxDomain, "Tile", run_tile, nullptr});
}

}  // namespace seqrt::cpu
