#include "backends/cuda/kernels/shape_ops.h"

namespace seqrt::cuda {
namespace {

unsigned blocks_for(int64_t n) {
  const int64_t blocks = (n + 255) / 256;
  return static_cast<unsigned>(blocks < 65535 ? blocks : 65535);
}

template <typename T>
__global__ void pad_kernel(const T* data, const T* constant, T* out,
                           PadIndex index, int64_t n) {
  const T fill = constant != nullptr ? *constant : T(0);
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t src = pad_source(index, i);
    out[i] = src < 0 ? fill : data[src];
  }
}

template <typename T>
__global__ void gather_elements_kernel(const T* data, const int64_t* indices,
                                       T* out, GatherElementsIndex index,
                                       int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    out[i] = data[gather_elements_source(index, indices, i)];
  }
}

template <typename T>
__global__ void range_int_kernel(T* out, int64_t start, int64_t delta,
                                 int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    out[i] = static_cast<T>(start + i * delta);
  }
}

template <typename T>
__global__ void range_float_kernel(T* out, double start, double delta,
                                   int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    out[i] = static_cast<T>(start + static_cast<double>(i) * delta);
  }
}

// Elements of 1, 2, 4, 8 bytes as unsigned integers of that size.
template <template <typename> class Launch, typename... Args>
cudaError_t by_size(size_t element_size, Args&&... args) {
  switch (element_size) {
    case 1:
      return Launch<uint8_t>::run(args...);
    case 2:
      return Launch<uint16_t>::run(args...);
    case 4:
      return Launch<uint32_t>::run(args...);
    case 8:
      return Launch<uint64_t>::run(args...);
    default:
      return cudaErrorInvalidValue;
  }
}

template <typename T>
struct PadLaunch {
  static cudaError_t run(const void* data, const void* constant, void* out,
                         const PadIndex& index, int64_t n,
                         cudaStream_t stream) {
    pad_kernel<T><<<blocks_for(n), 256, 0, stream>>>(
        static_cast<const T*>(data), static_cast<const T*>(constant),
        static_cast<T*>(out), index, n);
    return cudaGetLastError();
  }
};

template <typename T>
struct GatherElementsLaunch {
  static cudaError_t run(const void* data, const int64_t* indices, void* out,
                         const GatherElementsIndex& index, int64_t n,
                         cudaStream_t stream) {
    gather_elements_kernel<T><<<blocks_for(n), 256, 0, stream>>>(
        static_cast<const T*>(data), indices, static_cast<T*>(out), index, n);
    return cudaGetLastError();
  }
};

}  // namespace

cudaError_t launch_pad(const void* data, const void* constant, void* out,
                       size_t element_size, const PadIndex& index,
                       int64_t elements, cudaStream_t stream) {
  if (elements == 0) return cudaSuccess;
  return by_size<PadLaunch>(element_size, data, constant, out, index, elements,
                            stream);
}

cudaError_t launch_gather_elements(const void* data, const int64_t* indices,
                                   void* out, size_t element_size,
                                   const GatherElementsIndex& index,
                                   int64_t elements, cudaStream_t stream) {
  if (elements == 0) return cudaSuccess;
  return by_size<GatherElementsLaunch>(element_size, data, indices, out, index,
                                       elements, stream);
}

cudaError_t launch_range(DType dtype, double start, double delta,
                         int64_t start_int, int64_t delta_int, void* out,
                         int64_t n, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  switch (dtype) {
    case DType::kF32:
      range_float_kernel<float><<<blocks_for(n), 256, 0, stream>>>(
          static_cast<float*>(out), start, delta, n);
      break;
    case DType::kF64:
      range_float_kernel<double><<<blocks_for(n), 256, 0, stream>>>(
          static_cast<double*>(out), start, delta, n);
      break;
    case DType::kI32:
      range_int_kernel<int32_t><<<blocks_for(n), 256, 0, stream>>>(
          static_cast<int32_t*>(out), start_int, delta_int, n);
      break;
    case DType::kI64:
      range_int_kernel<int64_t><<<blocks_for(n), 256, 0, stream>>>(
          static_cast<int64_t*>(out), start_int, delta_int, n);
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace seqrt::cuda
