#include "graph/tensor.h"

#include "graph/alloc_fault.h"
#include "graph/block_cache.h"
#include "graph/run_control.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace seqrt {
namespace {

constexpr size_t kAlignment = 64;

#if defined(__linux__)
// Large tensors (a scan's output, a KV cache) get their own mapping, aligned
// to the 2 MiB of a transparent huge page and marked MADV_HUGEPAGE: fresh
// anonymous pages are already zero, so they are not written twice, and
// touching them faults once per 2 MiB instead of once per 4 KiB (measured:
// faults were a quarter of a 12 MB SelectiveScan output's cost).
constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kMappedMin = 2 * kHugePage;

std::shared_ptr<void> map_zeroed(size_t bytes) {
  const size_t size = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  const size_t span = size + kHugePage;
  void* raw = mmap(nullptr, span, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  auto* start = static_cast<char*>(raw);
  const uintptr_t address = reinterpret_cast<uintptr_t>(start);
  char* data = start + ((kHugePage - address % kHugePage) % kHugePage);
  // Give back the unaligned head and the unused tail of the span.
  if (data > start) munmap(start, static_cast<size_t>(data - start));
  const size_t tail = span - static_cast<size_t>(data - start) - size;
  if (tail > 0) munmap(data + size, tail);
  madvise(data, size, MADV_HUGEPAGE);  // advice only: ignored if THP is off
  return std::shared_ptr<void>(data, [size](void* p) { munmap(p, size); });
}
#endif

std::shared_ptr<void> allocate_aligned(size_t bytes) {
  if (host_allocation_fails()) return nullptr;
#if defined(__linux__)
  if (bytes >= kMappedMin) return map_zeroed(bytes);
#endif
  if (bytes >= kCachedBlockMin && bytes <= kCachedBlockMax) {
    return allocate_cached_block(bytes);
  }
  size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  if (rounded == 0) rounded = kAlignment;
  void* data = std::aligned_alloc(kAlignment, rounded);
  if (data == nullptr) return nullptr;
  std::memset(data, 0, rounded);
  return std::shared_ptr<void>(data, [](void* p) { std::free(p); });
}

template <typename T>
T saturating_cast(double value) {
  if (std::isnan(value)) return 0;
  if (value <= static_cast<double>(std::numeric_limits<T>::lowest())) {
    return std::numeric_limits<T>::lowest();
  }
  if (value >= static_cast<double>(std::numeric_limits<T>::max())) {
    return std::numeric_limits<T>::max();
  }
  return static_cast<T>(value);
}

}  // namespace

Result<Tensor> Tensor::allocate(DType dtype, std::vector<int64_t> dims) {
  if (dtype == DType::kUndefined) {
    return invalid_argument("cannot allocate a tensor of undefined dtype");
  }
  SEQRT_ASSIGN_OR_RETURN(int64_t count, checked_num_elements(dims));
  // The run's limits, for tensors allocated where no node names them (a
  // kernel's own buffers, an initializer at load); callers that know the
  // node check first (KernelContext::allocate_output).
  SEQRT_RETURN_IF_ERROR(check_run_allocation(dtype, dims, false, [&] {
    return fmt::format("a {} tensor", dtype_name(dtype));
  }));
  Tensor tensor;
  tensor.dtype_ = dtype;
  tensor.dims_ = std::move(dims);
  tensor.num_elements_ = count;
  std::shared_ptr<void> storage = allocate_aligned(tensor.byte_size());
  if (storage == nullptr) {
    return make_error(StatusCode::kOutOfMemory,
                      "cannot allocate {} bytes for a {} tensor of shape {}",
                      tensor.byte_size(), dtype_name(dtype),
                      dims_to_string(tensor.dims_));
  }
  tensor.data_ = storage.get();
  tensor.writable_ = true;
  tensor.owner_ = std::move(storage);
  return tensor;
}

Tensor Tensor::view(DType dtype, std::vector<int64_t> dims, const void* data,
                    std::shared_ptr<const void> owner) {
  Tensor tensor;
  tensor.dtype_ = dtype;
  tensor.dims_ = std::move(dims);
  Result<int64_t> count = checked_num_elements(tensor.dims_);
  assert(count.is_ok() && "Tensor::view: caller must validate dims");
  tensor.num_elements_ = count.is_ok() ? count.value() : 0;
  tensor.data_ = data;
  tensor.writable_ = false;
  tensor.owner_ = std::move(owner);
  return tensor;
}

Tensor Tensor::writable_view(DType dtype, std::vector<int64_t> dims, void* data,
                             std::shared_ptr<const void> owner) {
  Tensor tensor = view(dtype, std::move(dims), data, std::move(owner));
  tensor.writable_ = true;
  tensor.borrowed_ = true;
  return tensor;
}

void* Tensor::mutable_data() {
  assert(writable_ && "writing into a read-only tensor view");
  return const_cast<void*>(data_);
}

void Tensor::check_type(DType expected) const {
  (void)expected;
  assert(dtype_ == expected && "tensor accessed as the wrong element type");
}

double Tensor::element_f64(int64_t i) const {
  const auto* bytes = static_cast<const uint8_t*>(data_);
  switch (dtype_) {
    case DType::kF32:
      return static_cast<const float*>(data_)[i];
    case DType::kF16:
      return f16_to_f32(static_cast<const uint16_t*>(data_)[i]);
    case DType::kBF16:
      return bf16_to_f32(static_cast<const uint16_t*>(data_)[i]);
    case DType::kF64:
      return static_cast<const double*>(data_)[i];
    case DType::kI8:
      return static_cast<const int8_t*>(data_)[i];
    case DType::kU8:
      return bytes[i];
    case DType::kI32:
      return static_cast<const int32_t*>(data_)[i];
    case DType::kI64:
      return static_cast<double>(static_cast<const int64_t*>(data_)[i]);
    case DType::kBool:
      return bytes[i] != 0 ? 1.0 : 0.0;
    case DType::kI4:
      return unpack_int4(bytes, i, true);
    case DType::kU4:
      return unpack_int4(bytes, i, false);
    case DType::kF8E4M3FN:
    case DType::kF8E4M3FNUZ:
    case DType::kF8E5M2:
    case DType::kF8E5M2FNUZ:
    case DType::kF8E8M0:
      return f8_to_f32(dtype_, bytes[i]);
    case DType::kF4E2M1:
      return f4e2m1_to_f32(static_cast<uint8_t>(unpack_int4(bytes, i, false)));
    case DType::kUndefined:
      break;
  }
  return 0.0;
}

int64_t Tensor::element_i64(int64_t i) const {
  switch (dtype_) {
    case DType::kI8:
      return static_cast<const int8_t*>(data_)[i];
    case DType::kU8:
      return static_cast<const uint8_t*>(data_)[i];
    case DType::kI32:
      return static_cast<const int32_t*>(data_)[i];
    case DType::kI64:
      return static_cast<const int64_t*>(data_)[i];
    case DType::kBool:
      return static_cast<const uint8_t*>(data_)[i] != 0;
    default:
      return saturating_cast<int64_t>(element_f64(i));
  }
}

void Tensor::set_element_f64(int64_t i, double value) {
  void* data = mutable_data();
  switch (dtype_) {
    case DType::kF32:
      static_cast<float*>(data)[i] = static_cast<float>(value);
      break;
    case DType::kF16:
      static_cast<uint16_t*>(data)[i] = f32_to_f16(static_cast<float>(value));
      break;
    case DType::kBF16:
      static_cast<uint16_t*>(data)[i] = f32_to_bf16(static_cast<float>(value));
      break;
    case DType::kF64:
      static_cast<double*>(data)[i] = value;
      break;
    case DType::kBool:
      static_cast<uint8_t*>(data)[i] = value != 0.0;
      break;
    case DType::kUndefined:
      break;
    case DType::kI8:
      set_element_i64(i, saturating_cast<int8_t>(value));
      break;
    case DType::kU8:
      set_element_i64(i, saturating_cast<uint8_t>(value));
      break;
    case DType::kI32:
      set_element_i64(i, saturating_cast<int32_t>(value));
      break;
    case DType::kI64:
      set_element_i64(i, saturating_cast<int64_t>(value));
      break;
    case DType::kI4:
      pack_int4(
          static_cast<uint8_t*>(data), i,
          static_cast<int8_t>(std::isnan(value)
                                  ? 0.0
                                  : std::clamp(std::trunc(value), -8.0, 7.0)));
      break;
    case DType::kU4:
      pack_int4(
          static_cast<uint8_t*>(data), i,
          static_cast<int8_t>(std::isnan(value)
                                  ? 0.0
                                  : std::clamp(std::trunc(value), 0.0, 15.0)));
      break;
    // As Cast converts with its default attributes (saturate, round up).
    case DType::kF8E4M3FN:
    case DType::kF8E4M3FNUZ:
    case DType::kF8E5M2:
    case DType::kF8E5M2FNUZ:
    case DType::kF8E8M0:
      static_cast<uint8_t*>(data)[i] = f64_to_f8(dtype_, value, true);
      break;
    case DType::kF4E2M1:
      pack_int4(static_cast<uint8_t*>(data), i,
                static_cast<int8_t>(f64_to_f4e2m1(value)));
      break;
  }
}

void Tensor::set_element_i64(int64_t i, int64_t value) {
  void* data = mutable_data();
  switch (dtype_) {
    case DType::kI8:
      static_cast<int8_t*>(data)[i] = static_cast<int8_t>(value);
      break;
    case DType::kU8:
      static_cast<uint8_t*>(data)[i] = static_cast<uint8_t>(value);
      break;
    case DType::kI32:
      static_cast<int32_t*>(data)[i] = static_cast<int32_t>(value);
      break;
    case DType::kI64:
      static_cast<int64_t*>(data)[i] = value;
      break;
    case DType::kBool:
      static_cast<uint8_t*>(data)[i] = value != 0;
      break;
    case DType::kI4:
    case DType::kU4:
      pack_int4(static_cast<uint8_t*>(data), i, static_cast<int8_t>(value));
      break;
    default:
      set_element_f64(i, static_cast<double>(value));
      break;
  }
}

Tensor Tensor::clone() const {
  if (empty()) return Tensor();
  Result<Tensor> copy = allocate(dtype_, dims_);
  // The dims were valid for this tensor, so only memory can run out: fail
  // as the standard containers do; Session::run turns it into a Status.
  if (!copy.is_ok()) throw std::bad_alloc();
  if (byte_size() > 0) {
    std::memcpy(copy->mutable_data(), data_, byte_size());
  }
  return std::move(copy).value();
}

Result<Tensor> Tensor::reshaped(std::vector<int64_t> dims) const {
  SEQRT_ASSIGN_OR_RETURN(int64_t count, checked_num_elements(dims));
  if (count != num_elements_) {
    return invalid_argument("cannot reshape {} to {}: element counts differ",
                            dims_to_string(dims_), dims_to_string(dims));
  }
  Tensor out = *this;
  out.dims_ = std::move(dims);
  return out;
}

Result<Tensor> Tensor::slice_view(int64_t byte_offset,
                                  std::vector<int64_t> dims) const {
  SEQRT_ASSIGN_OR_RETURN(int64_t count, checked_num_elements(dims));
  const int64_t bytes =
      static_cast<int64_t>(dtype_bytes(dtype_, static_cast<size_t>(count)));
  if (byte_offset < 0 ||
      byte_offset > static_cast<int64_t>(byte_size()) - bytes) {
    return invalid_argument(
        "a view of {} elements at byte {} does not fit a {} tensor of {} "
        "bytes",
        count, byte_offset, dims_to_string(dims_), byte_size());
  }
  const void* at =
      count == 0 ? data_ : static_cast<const char*>(data_) + byte_offset;
  // Sharing the owner handle keeps the storage alive as long as the view.
  return view(dtype_, std::move(dims), at, owner_);
}

bool Tensor::same_as(const Tensor& other) const {
  if (dtype_ != other.dtype_ || dims_ != other.dims_) return false;
  return byte_size() == 0 || std::memcmp(data_, other.data_, byte_size()) == 0;
}

}  // namespace seqrt
