#include "backends/cuda/cuda_context.h"

#include <fmt/format.h>

#include "backends/cuda/cuda_status.h"

namespace seqrt::cuda {

Result<std::shared_ptr<CudaContext>> CudaContext::create(int device) {
  int count = 0;
  SEQRT_CUDA_RETURN_IF_ERROR(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
  if (count == 0) {
    return unsupported("cuda backend: no CUDA device (the driver reports 0)");
  }
  if (device < 0 || device >= count) {
    return invalid_argument("cuda backend: device {} requested, {} present",
                            device, count);
  }
  std::shared_ptr<CudaContext> context(new CudaContext());
  context->device_ = device;
  SEQRT_CUDA_RETURN_IF_ERROR(cudaSetDevice(device), "cudaSetDevice");
  cudaDeviceProp props;
  SEQRT_CUDA_RETURN_IF_ERROR(cudaGetDeviceProperties(&props, device),
                             "cudaGetDeviceProperties");
  DeviceInfo& info = context->info_;
  info.backend = "cuda";
  info.name = fmt::format("{} (sm_{}{})", props.name, props.major, props.minor);
  info.is_host_memory = false;
  info.memory_bytes = props.totalGlobalMem;
  info.shared_memory_bytes = static_cast<uint32_t>(props.sharedMemPerBlock);
  info.max_workgroup_invocations =
      static_cast<uint32_t>(props.maxThreadsPerBlock);
  info.subgroup_size = static_cast<uint32_t>(props.warpSize);
  DeviceLimits& limits = context->limits_;
  limits.sm_major = props.major;
  limits.sm_minor = props.minor;
  limits.multiprocessors = props.multiProcessorCount;
  limits.shared_per_block = static_cast<uint32_t>(props.sharedMemPerBlock);
  limits.shared_per_block_optin =
      static_cast<uint32_t>(props.sharedMemPerBlockOptin);
  limits.registers_per_block = static_cast<uint32_t>(props.regsPerBlock);
  limits.max_threads_per_block =
      static_cast<uint32_t>(props.maxThreadsPerBlock);
  limits.warp_size = static_cast<uint32_t>(props.warpSize);
  SEQRT_CUDA_RETURN_IF_ERROR(
      cudaStreamCreateWithFlags(&context->stream_, cudaStreamNonBlocking),
      "cudaStreamCreate");
  cublasStatus_t status = cublasLtCreate(&context->cublas_);
  if (status != CUBLAS_STATUS_SUCCESS) {
    return make_error(StatusCode::kInternal,
                      "cuda backend: cublasLtCreate failed: {}",
                      cublasLtGetStatusString(status));
  }
  return context;
}

CudaContext::~CudaContext() {
  if (cublas_ != nullptr) cublasLtDestroy(cublas_);
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
}

Status CudaContext::activate() const {
  SEQRT_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_), "cudaSetDevice");
  return Status::ok();
}

}  // namespace seqrt::cuda
