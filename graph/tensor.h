// A host tensor with concrete dims: graph constants, reference-kernel inputs
// and outputs, and the tensors users pass in and get back.
//
// Copies are shallow: they share the same storage. The storage is either
// owned (64-byte aligned, zero-initialised) or a read-only view into memory
// kept alive by an owner handle (for example a mapped .seqrt file).
#pragma once

#include <cstdint>
#include <memory>
#include <new>
#include <vector>

#include "graph/dtype.h"
#include "graph/shape.h"
#include "graph/status.h"

namespace seqrt {

// Storage types for the 16-bit floats, so templates can tell them apart.
struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

template <typename T>
constexpr DType dtype_of();
template <>
constexpr DType dtype_of<float>() {
  return DType::kF32;
}
template <>
constexpr DType dtype_of<Half>() {
  return DType::kF16;
}
template <>
constexpr DType dtype_of<BFloat16>() {
  return DType::kBF16;
}
template <>
constexpr DType dtype_of<double>() {
  return DType::kF64;
}
template <>
constexpr DType dtype_of<int8_t>() {
  return DType::kI8;
}
template <>
constexpr DType dtype_of<uint8_t>() {
  return DType::kU8;
}
template <>
constexpr DType dtype_of<int32_t>() {
  return DType::kI32;
}
template <>
constexpr DType dtype_of<int64_t>() {
  return DType::kI64;
}
template <>
constexpr DType dtype_of<bool>() {
  return DType::kBool;
}

class Tensor {
 public:
  Tensor() = default;  // empty: dtype kUndefined, no data

  // Zero-filled owned tensor; fails on bad dims or overflow.
  static Result<Tensor> allocate(DType dtype, std::vector<int64_t> dims);
  // Read-only view of `data`, which `owner` keeps alive. `data` must hold
  // byte_size() bytes; the caller checks that.
  static Tensor view(DType dtype, std::vector<int64_t> dims, const void* data,
                     std::shared_ptr<const void> owner);
  // Writable tensor over `data` (byte_size() bytes, 64-byte aligned) that
  // `owner` keeps alive: a block of a run's arena. Never the sole owner,
  // since the block belongs to the arena, so it is never donated.
  static Tensor writable_view(DType dtype, std::vector<int64_t> dims,
                              void* data, std::shared_ptr<const void> owner);
  // Owned tensor with the given values (for tests, samples and builders).
  template <typename T>
  static Tensor from_vector(std::vector<int64_t> dims,
                            const std::vector<T>& values);
  template <typename T>
  static Tensor scalar(T value) {
    return from_vector<T>({}, {value});
  }

  bool empty() const { return dtype_ == DType::kUndefined; }
  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& dims() const { return dims_; }
  size_t rank() const { return dims_.size(); }
  int64_t dim(size_t i) const { return dims_[i]; }
  int64_t num_elements() const { return num_elements_; }
  size_t byte_size() const {
    return dtype_bytes(dtype_, static_cast<size_t>(num_elements_));
  }
  Shape shape() const { return Shape::from_dims(dims_); }

  bool is_view() const { return !writable_; }
  // True when this is the only handle to writable storage, so a write into
  // it cannot show through any other tensor: the executor then lets a
  // kernel update it in place (a KV cache written by TensorScatter).
  bool is_sole_owner() const {
    return writable_ && !borrowed_ && owner_.use_count() == 1;
  }
  const void* data() const { return data_; }
  // Only owned tensors are writable; writing a view is our bug.
  void* mutable_data();

  template <typename T>
  const T* data_as() const {
    check_type(dtype_of<T>());
    return static_cast<const T*>(data_);
  }
  template <typename T>
  T* mutable_data_as() {
    check_type(dtype_of<T>());
    return static_cast<T*>(mutable_data());
  }

  // Element i converted to double / int64 (any dtype); for reference kernels.
  double element_f64(int64_t i) const;
  int64_t element_i64(int64_t i) const;
  // Stores `value` converted to this tensor's dtype: rounding for floats
  // (the float8s and f4e2m1 as Cast's defaults do: saturating, f8e8m0
  // rounding up), truncation toward zero saturated to the range for
  // integers (NaN -> 0), != 0 for bool. set_element_i64 into a narrower integer
  // wraps, as C does.
  void set_element_f64(int64_t i, double value);
  void set_element_i64(int64_t i, int64_t value);

  // Deep copy into owned storage.
  Tensor clone() const;
  // Same storage with other dims of equal element count.
  Result<Tensor> reshaped(std::vector<int64_t> dims) const;
  // Read-only view of `dims` elements starting `byte_offset` bytes into this
  // tensor's data, keeping its storage alive: a contiguous slice. Fails
  // unless the view lies inside this tensor's bytes.
  Result<Tensor> slice_view(int64_t byte_offset,
                            std::vector<int64_t> dims) const;
  // Byte-wise equality of dtype, dims and data.
  bool same_as(const Tensor& other) const;

 private:
  void check_type(DType expected) const;

  DType dtype_ = DType::kUndefined;
  std::vector<int64_t> dims_;
  int64_t num_elements_ = 0;
  const void* data_ = nullptr;
  bool writable_ = false;
  bool borrowed_ = false;  // writable_view: storage shared with an arena
  std::shared_ptr<const void> owner_;
};

template <typename T>
Tensor Tensor::from_vector(std::vector<int64_t> dims,
                           const std::vector<T>& values) {
  Result<Tensor> result = allocate(dtype_of<T>(), std::move(dims));
  // Out of memory is thrown as by the standard containers (Session::run and
  // the C API and CLI boundaries convert it); bad dims are our bug.
  if (!result.is_ok() && result.status().code() == StatusCode::kOutOfMemory) {
    throw std::bad_alloc();
  }
  assert(result.is_ok() && "from_vector: bad dims");
  Tensor tensor = std::move(result).value();
  assert(static_cast<size_t>(tensor.num_elements()) == values.size() &&
         "from_vector: value count does not match dims");
  T* out = tensor.mutable_data_as<T>();
  for (size_t i = 0; i < values.size(); ++i) out[i] = values[i];
  return tensor;
}

}  // namespace seqrt
