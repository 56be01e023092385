// CPU kernel of GatherND: the op's own checked plan (plan_gather_nd,
// ops/shape/gather_nd.h, which ScatterND's plan shares), then each output
// slice is one memcpy from its offset in data, slices in parallel chunks.
// Any dtype: slices move as bytes.
#include <algorithm>
#include <cstring>

#include "backends/cpu/kernel_table.h"
#include "backends/cpu/kernels/float_support.h"
#include "ops/shape/gather_nd.h"

namespace seqrt::cpu {
namespace {

// Bytes per chunk of slices handed to one thread.
constexpr int64_t kChunkBytes = 64 * 1024;

Status run_gather_nd(KernelContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(GatherNdPlan plan, plan_gather_nd(ctx));
  const Tensor& data = *ctx.input(0);
  SEQRT_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocate_output(0, data.dtype(), plan.out_dims));
  const std::vector<int64_t>& offsets = plan.slices.offsets;
  const size_t element = dtype_size(data.dtype());
  const size_t bytes = static_cast<size_t>(plan.slices.slice) * element;
  if (bytes == 0) return Status::ok();
  const auto* src = static_cast<const uint8_t*>(data.data());
  auto* dst = static_cast<uint8_t*>(out->mutable_data());
  const int64_t grain =
      std::max<int64_t>(1, kChunkBytes / static_cast<int64_t>(bytes));
  parallel_chunks(
      static_cast<int64_t>(offsets.size()), grain,
      [&](int64_t begin, int64_t end) {
        for (int64_t t = begin; t < end; ++t) {
          std::memcpy(dst + static_cast<size_t>(t) * bytes,
                      src + static_cast<size_t>(offsets[t]) * element, bytes);
        }
      });
  return Status::ok();
}

}  // namespace

void register_gather_nd_kernels(KernelTable& table) {
  table.add(CpuKernel{kOnnxDomain, "GatherND", run_gather_nd, nullptr});
}

}  // namespace seqrt::cpu
