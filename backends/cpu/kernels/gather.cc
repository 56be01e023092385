// CPU kernel of Gather, generic over dtypes: the blocks after the axis are
// copied whole for each picked index, indices checked before any copy.
#include <cstring>
#include <vector>

#include "backends/cpu/kernel_table.h"
#include "backends/cpu/kernels/float_support.h"
#include "backends/cpu/kernels/inferred_dims.h"
#include "ops/util.h"

namespace seqrt::cpu {
namespace {

Status run_gather(KernelContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(std::vector<int64_t> dims, inferred_dims(ctx));
  const Tensor& data = *ctx.input(0);
  const Tensor& indices = *ctx.input(1);
  SEQRT_ASSIGN_OR_RETURN(int64_t axis,
                         normalize_axis(ctx, ctx.attr_int("axis"),
                                        static_cast<int64_t>(data.rank())));
  int64_t size = data.dim(axis);
  int64_t count = indices.num_elements();
  std::vector<int64_t> picked(static_cast<size_t>(count));
  for (int64_t j = 0; j < count; ++j) {
    int64_t index = indices.element_i64(j);
    if (index < -size || index >= size) {
      return ctx.error("index {} is out of range for axis {} of size {}", index,
                       axis, size);
    }
    picked[j] = index < 0 ? index + size : index;
  }
  SEQRT_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocate_output(0, data.dtype(), dims));
  int64_t outer = 1;
  int64_t inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= data.dim(d);
  for (size_t d = axis + 1; d < data.rank(); ++d) inner *= data.dim(d);
  const size_t block = static_cast<size_t>(inner) * dtype_size(data.dtype());
  if (block == 0 || count == 0) return Status::ok();
  const char* src = static_cast<const char*>(data.data());
  char* dst = static_cast<char*>(out->mutable_data());
  parallel_chunks(outer * count, 256, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      int64_t o = r / count;
      int64_t j = r % count;
      std::memcpy(dst + r * block, src + (o * size + picked[j]) * block, block);
    }
  });
  return Status::ok();
}

}  // namespace

void register_gather_kernels(KernelTable& table) {
  table.add(CpuKernel{kOnnxDomain, "Gather", run_gather, nullptr});
}

}  // namespace seqrt::cpu
