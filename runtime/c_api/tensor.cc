// seqrt_tensor_*: host tensors that own a copy of their data, or borrow the
// caller's memory without one.
#include <algorithm>
#include <cstring>
#include <limits>

#include "runtime/c_api/handles.h"

namespace seqrt::c_api {
namespace {

// The C enum is the .seqrt numbering, which DType keeps too.
static_assert(SEQRT_DTYPE_F32 == static_cast<int>(DType::kF32));
static_assert(SEQRT_DTYPE_F16 == static_cast<int>(DType::kF16));
static_assert(SEQRT_DTYPE_BF16 == static_cast<int>(DType::kBF16));
static_assert(SEQRT_DTYPE_F64 == static_cast<int>(DType::kF64));
static_assert(SEQRT_DTYPE_I8 == static_cast<int>(DType::kI8));
static_assert(SEQRT_DTYPE_U8 == static_cast<int>(DType::kU8));
static_assert(SEQRT_DTYPE_I32 == static_cast<int>(DType::kI32));
static_assert(SEQRT_DTYPE_I64 == static_cast<int>(DType::kI64));
static_assert(SEQRT_DTYPE_BOOL == static_cast<int>(DType::kBool));
static_assert(SEQRT_DTYPE_I4 == static_cast<int>(DType::kI4));
static_assert(SEQRT_DTYPE_U4 == static_cast<int>(DType::kU4));
static_assert(SEQRT_DTYPE_F8E4M3FN == static_cast<int>(DType::kF8E4M3FN));
static_assert(SEQRT_DTYPE_F8E4M3FNUZ == static_cast<int>(DType::kF8E4M3FNUZ));
static_assert(SEQRT_DTYPE_F8E5M2 == static_cast<int>(DType::kF8E5M2));
static_assert(SEQRT_DTYPE_F8E5M2FNUZ == static_cast<int>(DType::kF8E5M2FNUZ));
static_assert(SEQRT_DTYPE_F8E8M0 == static_cast<int>(DType::kF8E8M0));
static_assert(SEQRT_DTYPE_F4E2M1 == static_cast<int>(DType::kF4E2M1));
static_assert(SEQRT_DTYPE_F4E2M1 == static_cast<int>(kLastDType));

struct TensorSpec {
  DType dtype = DType::kUndefined;
  std::vector<int64_t> dims;
  size_t bytes = 0;
};

// Checks the dtype and the dims (non-negative, no overflow in bytes).
Result<TensorSpec> check_spec(int dtype, const int64_t* dims, size_t rank) {
  if (dtype <= SEQRT_DTYPE_UNDEFINED || dtype > SEQRT_DTYPE_F4E2M1) {
    return invalid_argument("unknown dtype {}", dtype);
  }
  if (rank > 0) SEQRT_RETURN_IF_ERROR(require(dims, "dims"));
  TensorSpec spec;
  spec.dtype = static_cast<DType>(dtype);
  spec.dims.assign(dims, dims + rank);
  uint64_t count = 1;
  constexpr uint64_t kMax = std::numeric_limits<int64_t>::max();
  for (size_t i = 0; i < rank; ++i) {
    if (dims[i] < 0) {
      return invalid_argument("dims[{}] is {}; dims must be >= 0", i, dims[i]);
    }
    if (dims[i] != 0 && count > kMax / static_cast<uint64_t>(dims[i])) {
      return invalid_argument("the element count of dims ({}) overflows",
                              fmt::join(spec.dims, ","));
    }
    count *= static_cast<uint64_t>(dims[i]);
  }
  // Whole bytes per element, rounded up: a bound for packed types too.
  uint64_t element = (dtype_bits(spec.dtype) + 7) / 8;
  if (count > kMax / element) {
    return invalid_argument(
        "the byte size of a {} tensor of dims ({}) "
        "overflows",
        dtype_name(spec.dtype), fmt::join(spec.dims, ","));
  }
  spec.bytes = dtype_bytes(spec.dtype, static_cast<size_t>(count));
  return spec;
}

// `data_bytes` must be exactly what the dims need.
Status check_byte_count(const TensorSpec& spec, size_t data_bytes) {
  if (data_bytes == spec.bytes) return Status::ok();
  return invalid_argument("a {} tensor of dims ({}) needs {} bytes, got {}",
                          dtype_name(spec.dtype), fmt::join(spec.dims, ","),
                          spec.bytes, data_bytes);
}

Status create(int dtype, const int64_t* dims, size_t rank, const void* data,
              size_t data_bytes, seqrt_tensor** out) {
  SEQRT_RETURN_IF_ERROR(require(out, "out"));
  SEQRT_ASSIGN_OR_RETURN(TensorSpec spec, check_spec(dtype, dims, rank));
  if (data != nullptr || data_bytes != 0) {
    if (data == nullptr && spec.bytes != 0) {
      return invalid_argument("data is NULL but data_bytes is {}", data_bytes);
    }
    SEQRT_RETURN_IF_ERROR(check_byte_count(spec, data_bytes));
  }
  SEQRT_ASSIGN_OR_RETURN(Tensor tensor,
                         Tensor::allocate(spec.dtype, std::move(spec.dims)));
  if (data != nullptr && spec.bytes != 0) {
    std::memcpy(tensor.mutable_data(), data, spec.bytes);
  }
  auto handle = std::make_unique<seqrt_tensor>();
  handle->tensor = std::move(tensor);
  handle->writable = true;
  *out = handle.release();
  return Status::ok();
}

Status borrow(int dtype, const int64_t* dims, size_t rank, const void* data,
              size_t data_bytes, seqrt_tensor** out) {
  SEQRT_RETURN_IF_ERROR(require(out, "out"));
  SEQRT_ASSIGN_OR_RETURN(TensorSpec spec, check_spec(dtype, dims, rank));
  SEQRT_RETURN_IF_ERROR(check_byte_count(spec, data_bytes));
  // An empty tensor reads no bytes, so it may point anywhere, even NULL.
  if (spec.bytes != 0) SEQRT_RETURN_IF_ERROR(require(data, "data"));
  size_t element = std::max<size_t>(dtype_size(spec.dtype), 1);
  if (reinterpret_cast<uintptr_t>(data) % element != 0) {
    return invalid_argument("borrowed {} data at {} is not aligned to {} bytes",
                            dtype_name(spec.dtype), data, element);
  }
  auto handle = std::make_unique<seqrt_tensor>();
  // No owner: the caller keeps the memory alive (seqrt.h's rule).
  handle->tensor =
      Tensor::view(spec.dtype, std::move(spec.dims), data, nullptr);
  *out = handle.release();
  return Status::ok();
}

}  // namespace
}  // namespace seqrt::c_api

using seqrt::Status;
using seqrt::c_api::guarded;
using seqrt::c_api::require;

extern "C" {

seqrt_status seqrt_tensor_create(seqrt_dtype dtype, const int64_t* dims,
                                 size_t rank, const void* data,
                                 size_t data_bytes, seqrt_tensor** out) {
  return guarded(__func__, [&] {
    return seqrt::c_api::create(seqrt::c_api::c_enum_value(dtype), dims, rank,
                                data, data_bytes, out);
  });
}

seqrt_status seqrt_tensor_borrow(seqrt_dtype dtype, const int64_t* dims,
                                 size_t rank, const void* data,
                                 size_t data_bytes, seqrt_tensor** out) {
  return guarded(__func__, [&] {
    return seqrt::c_api::borrow(seqrt::c_api::c_enum_value(dtype), dims, rank,
                                data, data_bytes, out);
  });
}

void seqrt_tensor_release(seqrt_tensor* tensor) { delete tensor; }

seqrt_status seqrt_tensor_dtype(const seqrt_tensor* tensor, seqrt_dtype* out) {
  return guarded(__func__, [&] {
    SEQRT_RETURN_IF_ERROR(require(tensor, "tensor"));
    SEQRT_RETURN_IF_ERROR(require(out, "out"));
    *out = static_cast<seqrt_dtype>(tensor->tensor.dtype());
    return Status::ok();
  });
}

seqrt_status seqrt_tensor_shape(const seqrt_tensor* tensor,
                                const int64_t** dims, size_t* rank) {
  return guarded(__func__, [&] {
    SEQRT_RETURN_IF_ERROR(require(tensor, "tensor"));
    SEQRT_RETURN_IF_ERROR(require(dims, "dims"));
    SEQRT_RETURN_IF_ERROR(require(rank, "rank"));
    *rank = tensor->tensor.rank();
    *dims = *rank == 0 ? nullptr : tensor->tensor.dims().data();
    return Status::ok();
  });
}

seqrt_status seqrt_tensor_element_count(const seqrt_tensor* tensor,
                                        int64_t* out) {
  return guarded(__func__, [&] {
    SEQRT_RETURN_IF_ERROR(require(tensor, "tensor"));
    SEQRT_RETURN_IF_ERROR(require(out, "out"));
    *out = tensor->tensor.num_elements();
    return Status::ok();
  });
}

seqrt_status seqrt_tensor_byte_size(const seqrt_tensor* tensor, size_t* out) {
  return guarded(__func__, [&] {
    SEQRT_RETURN_IF_ERROR(require(tensor, "tensor"));
    SEQRT_RETURN_IF_ERROR(require(out, "out"));
    *out = tensor->tensor.byte_size();
    return Status::ok();
  });
}

seqrt_status seqrt_tensor_data(const seqrt_tensor* tensor, const void** out) {
  return guarded(__func__, [&] {
    SEQRT_RETURN_IF_ERROR(require(tensor, "tensor"));
    SEQRT_RETURN_IF_ERROR(require(out, "out"));
    *out = tensor->tensor.data();
    return Status::ok();
  });
}

seqrt_status seqrt_tensor_mutable_data(seqrt_tensor* tensor, void** out) {
  return guarded(__func__, [&]() -> Status {
    SEQRT_RETURN_IF_ERROR(require(tensor, "tensor"));
    SEQRT_RETURN_IF_ERROR(require(out, "out"));
    if (!tensor->writable) {
      return seqrt::invalid_argument(
          "the tensor is read-only: only tensors made by seqrt_tensor_create "
          "are writable");
    }
    *out = tensor->tensor.mutable_data();
    return Status::ok();
  });
}

}  // extern "C"
