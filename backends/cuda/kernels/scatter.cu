#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "backends/cuda/kernels/scatter.h"

namespace seqrt::cuda {
namespace {

// The reference's combine (scatter_combine in ops/shape/scatter.h) on a
// computing type A: sums and products in A, max/min with its comparisons
// (so a NaN update or current stays where the reference keeps it).
template <typename A>
__device__ A combine_as(ScatterCombine op, A current, A update) {
  switch (op) {
    case ScatterCombine::kAdd:
      return current + update;
    case ScatterCombine::kMul:
      return current * update;
    case ScatterCombine::kMax:
      return current < update ? update : current;
    case ScatterCombine::kMin:
      return update < current ? update : current;
    case ScatterCombine::kReplace:
      break;
  }
  return update;
}

struct Replace {
  template <typename T>
  __device__ T operator()(T, T update) const {
    return update;
  }
};

template <typename T>
struct FloatCombine {
  ScatterCombine op;
  __device__ T operator()(T current, T update) const {
    return combine_as(op, current, update);
  }
};

// f16 and bf16 as their bits: a float result rounded once, as the
// reference's double result is (float holds either exactly enough).
struct HalfCombine {
  ScatterCombine op;
  __device__ uint16_t operator()(uint16_t current, uint16_t update) const {
    const float r = combine_as(op, __half2float(__ushort_as_half(current)),
                               __half2float(__ushort_as_half(update)));
    return __half_as_ushort(__float2half_rn(r));
  }
};

struct BFloatCombine {
  ScatterCombine op;
  __device__ uint16_t operator()(uint16_t current, uint16_t update) const {
    const float r =
        combine_as(op, __bfloat162float(__ushort_as_bfloat16(current)),
                   __bfloat162float(__ushort_as_bfloat16(update)));
    return __bfloat16_as_ushort(__float2bfloat16_rn(r));
  }
};

// Sums and products wrap (through uint64, as the reference); max and min
// compare as T.
template <typename T>
struct IntCombine {
  ScatterCombine op;
  __device__ T operator()(T current, T update) const {
    if (op == ScatterCombine::kAdd || op == ScatterCombine::kMul) {
      return static_cast<T>(combine_as(op, static_cast<uint64_t>(current),
                                       static_cast<uint64_t>(update)));
    }
    return combine_as(op, current, update);
  }
};

template <typename T, typename Combine>
__global__ void scatter_kernel(ScatterGroupsView groups, const T* updates,
                               T* out, Combine combine) {
  const int64_t n = groups.groups * groups.slice;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    scatter_group_apply(groups, i, updates, out, combine);
  }
}

template <typename T, typename Combine>
cudaError_t launch(const ScatterGroupsView& groups, const void* updates,
                   void* out, Combine combine, cudaStream_t stream) {
  const int64_t blocks = scatter_blocks(groups.groups * groups.slice);
  if (blocks == 0) return cudaSuccess;
  scatter_kernel<T><<<unsigned(blocks), 256, 0, stream>>>(
      groups, static_cast<const T*>(updates), static_cast<T*>(out), combine);
  return cudaGetLastError();
}

cudaError_t launch_replace(size_t element_size, const ScatterGroupsView& groups,
                           const void* updates, void* out,
                           cudaStream_t stream) {
  switch (element_size) {
    case 1:
      return launch<uint8_t>(groups, updates, out, Replace{}, stream);
    case 2:
      return launch<uint16_t>(groups, updates, out, Replace{}, stream);
    case 4:
      return launch<uint32_t>(groups, updates, out, Replace{}, stream);
    case 8:
      return launch<uint64_t>(groups, updates, out, Replace{}, stream);
    default:
      return cudaErrorInvalidValue;
  }
}

template <typename T>
__global__ void gather_slices_kernel(const int64_t* offsets, int64_t count,
                                     int64_t slice, const T* data, T* out) {
  const int64_t n = count * slice;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    out[i] = data[gather_slice_source(offsets, slice, i)];
  }
}

template <typename T>
cudaError_t launch_gather(const int64_t* offsets, int64_t count, int64_t slice,
                          const void* data, void* out, cudaStream_t stream) {
  const int64_t blocks = scatter_blocks(count * slice);
  if (blocks == 0) return cudaSuccess;
  gather_slices_kernel<T><<<unsigned(blocks), 256, 0, stream>>>(
      offsets, count, slice, static_cast<const T*>(data), static_cast<T*>(out));
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_gather_slices(size_t element_size, const int64_t* offsets,
                                 int64_t count, int64_t slice, const void* data,
                                 void* out, cudaStream_t stream) {
  switch (element_size) {
    case 1:
      return launch_gather<uint8_t>(offsets, count, slice, data, out, stream);
    case 2:
      return launch_gather<uint16_t>(offsets, count, slice, data, out, stream);
    case 4:
      return launch_gather<uint32_t>(offsets, count, slice, data, out, stream);
    case 8:
      return launch_gather<uint64_t>(offsets, count, slice, data, out, stream);
    default:
      return cudaErrorInvalidValue;
  }
}

cudaError_t launch_scatter(DType dtype, ScatterCombine combine,
                           const ScatterGroupsView& groups, const void* updates,
                           void* out, cudaStream_t stream) {
  if (combine == ScatterCombine::kReplace) {
    return launch_replace(dtype_size(dtype), groups, updates, out, stream);
  }
  switch (dtype) {
    case DType::kF32:
      return launch<float>(groups, updates, out, FloatCombine<float>{combine},
                           stream);
    case DType::kF64:
      return launch<double>(groups, updates, out, FloatCombine<double>{combine},
                            stream);
    case DType::kF16:
      return launch<uint16_t>(groups, updates, out, HalfCombine{combine},
                              stream);
    case DType::kBF16:
      return launch<uint16_t>(groups, updates, out, BFloatCombine{combine},
                              stream);
    case DType::kI8:
      return launch<int8_t>(groups, updates, out, IntCombine<int8_t>{combine},
                            stream);
    case DType::kU8:
      return launch<uint8_t>(groups, updates, out, IntCombine<uint8_t>{combine},
                             stream);
    case DType::kI32:
      return launch<int32_t>(groups, updates, out, IntCombine<int32_t>{combine},
                             stream);
    case DType::kI64:
      return launch<int64_t>(groups, updates, out, IntCombine<int64_t>{combine},
                             stream);
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace seqrt::cuda
