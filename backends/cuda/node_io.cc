#include "backends/cuda/node_io.h"

#include <cstring>

#include "backends/cuda/cuda_status.h"

namespace seqrt::cuda {

int64_t element_count(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

Status NodeIo::begin(const std::vector<std::vector<int64_t>>& outputs,
                     int64_t scratch_floats,
                     const std::vector<DType>& output_dtypes) {
  output_dtypes_.assign(outputs.size(), DType::kF32);
  for (size_t i = 0; i < outputs.size() && i < output_dtypes.size(); ++i) {
    output_dtypes_[i] = output_dtypes[i];
  }
  size_t device_bytes = 0;
  size_t staging_bytes = 0;
  for (size_t i = 0; i < ctx_.num_inputs(); ++i) {
    if (!ctx_.has_input(i)) continue;
    size_t bytes = DeviceArena::aligned(ctx_.input(i)->byte_size());
    device_bytes += bytes;
    staging_bytes += bytes;
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    size_t bytes = DeviceArena::aligned(dtype_bytes(
        output_dtypes_[i], static_cast<size_t>(element_count(outputs[i]))));
    device_bytes += bytes;
    staging_bytes = std::max(staging_bytes, bytes);
  }
  device_bytes += DeviceArena::aligned(sizeof(float) * scratch_floats);
  DeviceArena& arena = cuda_.arena();
  SEQRT_RETURN_IF_ERROR(arena.reserve(device_bytes));
  arena.reset();
  SEQRT_ASSIGN_OR_RETURN(void* staging, cuda_.staging().reserve(staging_bytes));
  char* stage = static_cast<char*>(staging);
  inputs_.assign(ctx_.num_inputs(), nullptr);
  for (size_t i = 0; i < ctx_.num_inputs(); ++i) {
    if (!ctx_.has_input(i)) continue;
    const Tensor& tensor = *ctx_.input(i);
    void* block = arena.take(tensor.byte_size());
    std::memcpy(stage, tensor.data(), tensor.byte_size());
    SEQRT_CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(block, stage, tensor.byte_size(),
                        cudaMemcpyHostToDevice, cuda_.stream()),
        "upload of a node input");
    stage += DeviceArena::aligned(tensor.byte_size());
    inputs_[i] = static_cast<const float*>(block);
  }
  output_dims_ = outputs;
  outputs_.assign(outputs.size(), nullptr);
  for (size_t i = 0; i < outputs.size(); ++i) {
    outputs_[i] = arena.take(dtype_bytes(
        output_dtypes_[i], static_cast<size_t>(element_count(outputs[i]))));
  }
  scratch_ = static_cast<float*>(arena.take(sizeof(float) * scratch_floats));
  return Status::ok();
}

Status NodeIo::finish(cudaError_t launch, const char* what) {
  SEQRT_CUDA_RETURN_IF_ERROR(launch, what);
  for (size_t i = 0; i < outputs_.size() && i < ctx_.num_outputs(); ++i) {
    SEQRT_ASSIGN_OR_RETURN(
        Tensor * out,
        ctx_.allocate_output(i, output_dtypes_[i], output_dims_[i]));
    size_t bytes = out->byte_size();
    SEQRT_ASSIGN_OR_RETURN(void* staging, cuda_.staging().reserve(bytes));
    // The staging buffer is reused by the next output: wait for each copy.
    SEQRT_CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(staging, outputs_[i], bytes, cudaMemcpyDeviceToHost,
                        cuda_.stream()),
        "download of a node output");
    SEQRT_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(cuda_.stream()), what);
    if (bytes > 0) std::memcpy(out->mutable_data(), staging, bytes);
  }
  SEQRT_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(cuda_.stream()), what);
  return Status::ok();
}

}  // namespace seqrt::cuda
