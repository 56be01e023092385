// CPU kernel of Trilu, generic over dtypes: each row keeps the part on its
// side of the k-th diagonal and zeroes the rest.
#include <algorithm>
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

Status run_trilu(KernelContext& ctx) {
  const Tensor& in = *ctx.input(0);
  if (in.rank() < 2) {
    return ctx.error("input must have rank >= 2, got shape {}",
                     dims_to_string(in.dims()));
  }
  int64_t k = 0;
  if (ctx.has_input(1)) {
    SEQRT_ASSIGN_OR_RETURN(k, read_int_scalar(ctx, *ctx.input(1), "k"));
  }
  const bool upper = ctx.attr_int("upper") != 0;
  SEQRT_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocate_output(0, in.dtype(), in.dims()));
  const int64_t rows = in.dim(in.rank() - 2);
  const int64_t cols = in.dim(in.rank() - 1);
  if (out->num_elements() == 0) return Status::ok();
  const size_t element = dtype_size(in.dtype());
  const auto* src = static_cast<const uint8_t*>(in.data());
  auto* dst = static_cast<uint8_t*>(out->mutable_data());
  // k may be any int64: clamp the kept columns [lo, hi) of row i to [0, cols].
  auto clamp = [cols](int64_t v) {
    return std::min(std::max<int64_t>(v, 0), cols);
  };
  parallel_chunks(
      in.num_elements() / cols, std::max<int64_t>(1, kRowGrain / cols),
      [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) {
          int64_t i = r % rows;
          int64_t diag = k > cols ? cols : (k < -rows ? -rows : k);
          int64_t lo = upper ? clamp(i + diag) : 0;
          int64_t hi = upper ? cols : clamp(i + diag + 1);
          if (lo >= hi) continue;
          size_t offset = static_cast<size_t>(r * cols + lo) * element;
          std::memcpy(dst + offset, src + offset,
                      static_cast<size_t>(hi - lo) * element);
        }
      });
  return Status::ok();
}

}  // namespace

void register_trilu_kernels(KernelTable& table) {
  table.add(CpuKernel{kOnnxDomain, "Trilu", run_trilu, nullptr});
}

}  // namespace seqrt::cpu
