#include <cuda_fp16.h>

#include "backends/cuda/kernels/convert.h"

namespace seqrt::cuda {
namespace {

constexpr int kThreads = 256;

int blocks_for(int64_t n) {
  int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<int>(blocks < 65535 * 32 ? blocks : 65535 * 32);
}

__device__ bool is_float_type(DType t) {
  return t == DType::kF32 || t == DType::kF16 || t == DType::kBF16 ||
         t == DType::kF64;
}

__device__ float bf16_bits_to_float(uint16_t bits) {
  return __uint_as_float(static_cast<uint32_t>(bits) << 16);
}

// Round to nearest even, NaN kept as the quiet NaN 0x7fc0 (as the host's
// f32_to_bf16, so both give the same bits).
__device__ uint16_t float_to_bf16_bits(float value) {
  const uint32_t word = __float_as_uint(value);
  if ((word & 0x7fffffffu) > 0x7f800000u) return 0x7fc0;
  return static_cast<uint16_t>((word + 0x7fffu + ((word >> 16) & 1u)) >> 16);
}

__device__ double load_f64(const void* p, DType t, int64_t i) {
  switch (t) {
    case DType::kF32:
      return static_cast<const float*>(p)[i];
    case DType::kF16:
      return __half2float(static_cast<const __half*>(p)[i]);
    case DType::kBF16:
      return bf16_bits_to_float(static_cast<const uint16_t*>(p)[i]);
    case DType::kF64:
      return static_cast<const double*>(p)[i];
    case DType::kI8:
      return static_cast<const int8_t*>(p)[i];
    case DType::kU8:
    case DType::kBool:
      return static_cast<const uint8_t*>(p)[i];
    case DType::kI32:
      return static_cast<const int32_t*>(p)[i];
    case DType::kI64:
      return static_cast<double>(static_cast<const int64_t*>(p)[i]);
    case DType::kUndefined:
      break;
  }
  return 0.0;
}

// Integers and bools only (floats go through load_f64).
__device__ int64_t load_i64(const void* p, DType t, int64_t i) {
  switch (t) {
    case DType::kI8:
      return static_cast<const int8_t*>(p)[i];
    case DType::kU8:
      return static_cast<const uint8_t*>(p)[i];
    case DType::kBool:
      return static_cast<const uint8_t*>(p)[i] != 0;
    case DType::kI32:
      return static_cast<const int32_t*>(p)[i];
    case DType::kI64:
      return static_cast<const int64_t*>(p)[i];
    default:
      break;
  }
  return 0;
}

template <typename T>
__device__ T saturate(double value, double lowest, double highest) {
  if (isnan(value)) return T(0);
  if (value <= lowest) return static_cast<T>(lowest);
  if (value >= highest) return static_cast<T>(highest);
  return static_cast<T>(value);
}

__device__ void store_i64(void* p, DType t, int64_t i, int64_t value);

// As Tensor::set_element_f64.
__device__ void store_f64(void* p, DType t, int64_t i, double value) {
  switch (t) {
    case DType::kF32:
      static_cast<float*>(p)[i] = static_cast<float>(value);
      break;
    case DType::kF16:
      static_cast<__half*>(p)[i] = __float2half_rn(static_cast<float>(value));
      break;
    case DType::kBF16:
      static_cast<uint16_t*>(p)[i] =
          float_to_bf16_bits(static_cast<float>(value));
      break;
    case DType::kF64:
      static_cast<double*>(p)[i] = value;
      break;
    case DType::kBool:
      static_cast<uint8_t*>(p)[i] = value != 0.0;
      break;
    case DType::kI8:
      static_cast<int8_t*>(p)[i] = saturate<int8_t>(value, -128.0, 127.0);
      break;
    case DType::kU8:
      static_cast<uint8_t*>(p)[i] = saturate<uint8_t>(value, 0.0, 255.0);
      break;
    case DType::kI32:
      static_cast<int32_t*>(p)[i] =
          saturate<int32_t>(value, -2147483648.0, 2147483647.0);
      break;
    case DType::kI64:
      // 2^63 is the first double past the range; -2^63 is exact.
      if (isnan(value)) {
        static_cast<int64_t*>(p)[i] = 0;
      } else if (value >= 9223372036854775808.0) {
        static_cast<int64_t*>(p)[i] = INT64_MAX;
      } else if (value <= -9223372036854775808.0) {
        static_cast<int64_t*>(p)[i] = INT64_MIN;
      } else {
        static_cast<int64_t*>(p)[i] = static_cast<int64_t>(value);
      }
      break;
    case DType::kUndefined:
      break;
  }
}

// As Tensor::set_element_i64: integers wrap, floats convert.
__device__ void store_i64(void* p, DType t, int64_t i, int64_t value) {
  switch (t) {
    case DType::kI8:
      static_cast<int8_t*>(p)[i] = static_cast<int8_t>(value);
      break;
    case DType::kU8:
      static_cast<uint8_t*>(p)[i] = static_cast<uint8_t>(value);
      break;
    case DType::kI32:
      static_cast<int32_t*>(p)[i] = static_cast<int32_t>(value);
      break;
    case DType::kI64:
      static_cast<int64_t*>(p)[i] = value;
      break;
    case DType::kBool:
      static_cast<uint8_t*>(p)[i] = value != 0;
      break;
    default:
      store_f64(p, t, i, static_cast<double>(value));
      break;
  }
}

__global__ void cast_kernel(const void* x, DType from, void* y, DType to,
                            int64_t n) {
  const bool via_float = is_float_type(from);
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    if (via_float) {
      store_f64(y, to, i, load_f64(x, from, i));
    } else {
      store_i64(y, to, i, load_i64(x, from, i));
    }
  }
}

template <typename T>
__device__ bool compare(CompareOp op, T a, T b) {
  switch (op) {
    case CompareOp::kEqual:
      return a == b;
    case CompareOp::kLess:
      return a < b;
    case CompareOp::kGreater:
      return a > b;
    case CompareOp::kLessOrEqual:
      return a <= b;
    case CompareOp::kGreaterOrEqual:
      return a >= b;
  }
  return false;
}

__global__ void compare_kernel(CompareOp op, const void* a, const void* b,
                               DType dtype, uint8_t* out, BroadcastIndex index,
                               int64_t n) {
  const bool exact = !is_float_type(dtype);
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    int64_t rest = i;
    int64_t ia = 0;
    int64_t ib = 0;
    for (int axis = index.rank - 1; axis >= 0; --axis) {
      const int64_t coord = rest % index.dims[axis];
      rest /= index.dims[axis];
      ia += coord * index.a_strides[axis];
      ib += coord * index.b_strides[axis];
    }
    out[i] = exact
                 ? compare(op, load_i64(a, dtype, ia), load_i64(b, dtype, ib))
                 : compare(op, load_f64(a, dtype, ia), load_f64(b, dtype, ib));
  }
}

// A float format's sign bit and its exponent bits, as T.
template <typename T>
struct FloatBits {
  T sign, exponent;
};

template <typename T>
__global__ void float_class_kernel(FloatClassQuery query, const T* x,
                                   FloatBits<T> bits, uint8_t* out, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    const T magnitude = x[i] & static_cast<T>(~bits.sign);
    const bool negative = (x[i] & bits.sign) != 0;
    out[i] = query.nan ? magnitude > bits.exponent
                       : magnitude == bits.exponent &&
                             (negative ? query.negative : query.positive);
  }
}

template <typename T>
cudaError_t launch_classes(FloatClassQuery query, const void* x,
                           FloatBits<T> bits, uint8_t* out, int64_t n,
                           cudaStream_t stream) {
  float_class_kernel<T><<<blocks_for(n), kThreads, 0, stream>>>(
      query, static_cast<const T*>(x), bits, out, n);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_float_class(FloatClassQuery query, const void* x,
                               DType dtype, uint8_t* out, int64_t n,
                               cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  switch (dtype) {
    case DType::kF32:
      return launch_classes<uint32_t>(query, x, {0x80000000u, 0x7f800000u}, out,
                                      n, stream);
    case DType::kF64:
      return launch_classes<uint64_t>(
          query, x, {0x8000000000000000ull, 0x7ff0000000000000ull}, out, n,
          stream);
    case DType::kF16:
      return launch_classes<uint16_t>(query, x, {0x8000, 0x7c00}, out, n,
                                      stream);
    case DType::kBF16:
      return launch_classes<uint16_t>(query, x, {0x8000, 0x7f80}, out, n,
                                      stream);
    default:
      return cudaErrorInvalidValue;
  }
}

cudaError_t launch_cast(const void* x, DType from, void* y, DType to, int64_t n,
                        cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  cast_kernel<<<blocks_for(n), kThreads, 0, stream>>>(x, from, y, to, n);
  return cudaGetLastError();
}

cudaError_t launch_compare(CompareOp op, const void* a, const void* b,
                           DType dtype, uint8_t* out,
                           const BroadcastIndex& index, int64_t n,
                           cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  compare_kernel<<<blocks_for(n), kThreads, 0, stream>>>(op, a, b, dtype, out,
                                                         index, n);
  return cudaGetLastError();
}

}  // namespace seqrt::cuda
