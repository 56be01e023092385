// Moves one node's tensors between the host and the node arena:
// inputs are uploaded through the pinned staging buffer, the kernel writes
// its outputs into arena blocks, and finish() brings them back into the
// node's output tensors. One stream synchronisation per node.
#pragma once

#include <cstdint>
#include <vector>

#include "backends/cuda/cuda_context.h"
#include "ops/op_context.h"

namespace seqrt::cuda {

class NodeIo {
 public:
  NodeIo(KernelContext& ctx, CudaContext& cuda) : ctx_(ctx), cuda_(cuda) {}

  // Uploads every present input (its bytes, whatever its dtype) and sets
  // aside `outputs` (dims per output; an empty entry skips that output) of
  // `output_dtypes` (f32 where not given) plus `scratch_floats`.
  Status begin(const std::vector<std::vector<int64_t>>& outputs,
               int64_t scratch_floats = 0,
               const std::vector<DType>& output_dtypes = {});
  // Null when input i is absent or beyond the node's inputs.
  const float* input(size_t i) const {
    return i < inputs_.size() ? inputs_[i] : nullptr;
  }
  float* output(size_t i) const { return static_cast<float*>(outputs_[i]); }
  // The same blocks for kernels that move bytes of any dtype.
  const void* raw_input(size_t i) const { return input(i); }
  void* raw_output(size_t i) const { return outputs_[i]; }
  float* scratch() const { return scratch_; }
  // Checks the kernels launched (`what` names them), waits for them and
  // copies the outputs into the node's output tensors.
  Status finish(cudaError_t launch, const char* what);

 private:
  KernelContext& ctx_;
  CudaContext& cuda_;
  std::vector<const float*> inputs_;
  std::vector<void*> outputs_;
  std::vector<std::vector<int64_t>> output_dims_;
  std::vector<DType> output_dtypes_;
  float* scratch_ = nullptr;
};

int64_t element_count(const std::vector<int64_t>& dims);

}  // namespace seqrt::cuda
