// CPU kernel of ConstantOfShape, any dtype: the value attribute's element
// copied to every output element, dims from the op's inference.
#include <cstring>
#include <vector>

#include "backends/cpu/kernel_table.h"
#include "backends/cpu/kernels/float_support.h"
#include "backends/cpu/kernels/inferred_dims.h"

namespace seqrt::cpu {
namespace {

Status run_constant_of_shape(KernelContext& ctx) {
  SEQRT_ASSIGN_OR_RETURN(std::vector<int64_t> dims, inferred_dims(ctx));
  const Tensor& value = ctx.attr_tensor("value");
  if (value.num_elements() != 1) {
    return ctx.error("attribute 'value' must hold one element, got {}",
                     value.num_elements());
  }
  SEQRT_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocate_output(0, value.dtype(), dims));
  const size_t element = dtype_size(value.dtype());
  char* dst = static_cast<char*>(out->mutable_data());
  parallel_chunks(out->num_elements(), 65536, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      std::memcpy(dst + i * element, value.data(), element);
    }
  });
  return Status::ok();
}

}  // namespace

void register_constant_of_shape_kernels(KernelTable& table) {
  table.add(CpuKernel{kOnnxDomain, "ConstantOfShape", run_constant_of_shape,
                      nullptr});
}

}  // namespace seqrt::cpu
