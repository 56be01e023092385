// CPU kernel of Range: start + i·delta for every i, integers exactly, floats
// in double; the count comes from the op's inference.
#include <vector>

#include "backends/cpu/kernel_table.h"
#include "backends/cpu/kernels/inferred_dims.h"

namespace seqrt::cpu {
namespace {

Status run_range(KernelContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(std::vector<int64_t> dims, inferred_dims(ctx));
  const Tensor& start = *ctx.input(0);
  const Tensor& delta = *ctx.input(2);
  SEQRT_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocate_output(0, start.dtype(), dims));
  const int64_t n = out->num_elements();
  if (is_integer(start.dtype())) {
    // start + i·delta stays between start and limit, so it never overflows.
    const int64_t first = start.element_i64(0);
    const int64_t step = delta.element_i64(0);
    for (int64_t i = 0; i < n; ++i) out->set_element_i64(i, first + i * step);
    return Status::ok();
  }
  const double first = start.element_f64(0);
  const double step = delta.element_f64(0);
  for (int64_t i = 0; i < n; ++i) {
    out->set_element_f64(i, first + static_cast<double>(i) * step);
  }
  return Status::ok();
}

}  // namespace

void register_range_kernels(KernelTable& table) {
  table.add(CpuKernel{kOnnxDomain, "Range", run_range, nullptr});
}

}  // namespace seqrt::cpu
