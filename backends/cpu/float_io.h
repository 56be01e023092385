// CPU kernels compute in f32 (OPS.md: f16/bf16 inputs are converted on
// load, state stays f32). These convert at a kernel's edges.
#pragma once

#include "graph/tensor.h"

namespace seqrt::cpu {

// `tensor` itself when it is f32 (shared, no copy); else an f32 copy.
Result<Tensor> load_f32(const Tensor& tensor);
// `tensor` (f32) itself when `dtype` is f32; else a converted copy.
Result<Tensor> store_as(const Tensor& tensor, DType dtype);

}  // namespace seqrt::cpu
