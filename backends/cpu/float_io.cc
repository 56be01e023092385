#include "backends/cpu/float_io.h"

namespace seqrt::cpu {
namespace {

Result<Tensor> converted(const Tensor& tensor, DType dtype) {
  SEQRT_ASSIGN_OR_RETURN(Tensor out, Tensor::allocate(dtype, tensor.dims()));
  for (int64_t i = 0; i < tensor.num_elements(); ++i) {
    out.set_element_f64(i, tensor.element_f64(i));
  }
  return out;
}

}  // namespace

Result<Tensor> load_f32(const Tensor& tensor) {
  if (tensor.dtype() == DType::kF32) return tensor;
  return converted(tensor, DType::kF32);
}

Result<Tensor> store_as(const Tensor& tensor, DType dtype) {
  if (dtype == tensor.dtype()) return tensor;
  return converted(tensor, dtype);
}

}  // namespace seqrt::cpu
