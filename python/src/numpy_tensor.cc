#include "python/src/numpy_tensor.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "importers/tensor/npy.h"
#include "python/src/errors.h"

namespace py = pybind11;

namespace seqrt::python {
namespace {

constexpr uintptr_t kViewAlignment = 64;

const char* kSupported =
    "float32, float64, float16, bfloat16 (ml_dtypes), int8, uint8, int32, "
    "int64, bool";

DType dtype_from_numpy(const py::dtype& type, const std::string& what) {
  // Through Python attributes: pybind11 2.10 reads dtype.kind/itemsize from
  // NumPy 1's C struct, whose layout NumPy 2 changed.
  const char kind = type.attr("kind").cast<std::string>().at(0);
  const auto size = type.attr("itemsize").cast<py::ssize_t>();
  if (kind == 'f' && size == 4) return DType::kF32;
  if (kind == 'f' && size == 8) return DType::kF64;
  if (kind == 'f' && size == 2) return DType::kF16;
  if (kind == 'i' && size == 1) return DType::kI8;
  if (kind == 'i' && size == 4) return DType::kI32;
  if (kind == 'i' && size == 8) return DType::kI64;
  if (kind == 'u' && size == 1) return DType::kU8;
  if (kind == 'b' && size == 1) return DType::kBool;
  // ml_dtypes' bfloat16 (what onnx uses) has the same bits as seqrt's.
  if (size == 2 && text(type.attr("name")) == "bfloat16") {
    return DType::kBF16;
  }
  throw py::type_error(
      fmt::format("{}: NumPy dtype {} has no seqrt dtype; seqrt takes {}", what,
                  text(type), kSupported));
}

py::dtype numpy_dtype(DType dtype, const std::string& what) {
  switch (dtype) {
    case DType::kF32:
      return py::dtype::of<float>();
    case DType::kF64:
      return py::dtype::of<double>();
    case DType::kF16:
      return py::dtype::from_args(py::str("float16"));
    case DType::kI8:
      return py::dtype::of<int8_t>();
    case DType::kU8:
      return py::dtype::of<uint8_t>();
    case DType::kI32:
      return py::dtype::of<int32_t>();
    case DType::kI64:
      return py::dtype::of<int64_t>();
    case DType::kBool:
      return py::dtype::of<bool>();
    case DType::kBF16:
      try {
        return py::dtype::from_args(
            py::module_::import("ml_dtypes").attr("bfloat16"));
      } catch (py::error_already_set&) {
        throw py::type_error(fmt::format(
            "{} is bfloat16, which NumPy holds only with the ml_dtypes "
            "package (pip install ml_dtypes)",
            what));
      }
    case DType::kI4:  // array_from_tensor widens these first
    case DType::kU4:
    case DType::kF8E4M3FN:
    case DType::kF8E4M3FNUZ:
    case DType::kF8E5M2:
    case DType::kF8E5M2FNUZ:
    case DType::kF8E8M0:
    case DType::kF4E2M1:
    case DType::kUndefined:
      break;
  }
  throw py::type_error(fmt::format("{} has no dtype", what));
}

// Keeps a Python object alive for as long as a tensor views its memory.
// The last tensor handle may go away on a thread without the GIL (inside a
// run), so the release takes it.
std::shared_ptr<const void> hold(py::object object) {
  PyObject* raw = object.release().ptr();
  return std::shared_ptr<const void>(raw, [](const void* pointer) {
    if (!Py_IsInitialized()) return;  // at exit: nothing left to free into
    PyGILState_STATE state = PyGILState_Ensure();
    Py_DECREF(static_cast<PyObject*>(const_cast<void*>(pointer)));
    PyGILState_Release(state);
  });
}

}  // namespace

Tensor tensor_from_array(py::handle object, const std::string& what) {
  py::array array = py::array::ensure(object);
  if (!array) {
    PyErr_Clear();
    throw py::type_error(fmt::format("{}: expected a NumPy array, got {}", what,
                                     text(py::type::of(object))));
  }
  const DType dtype = dtype_from_numpy(array.dtype(), what);
  if (!array.dtype().attr("isnative").cast<bool>()) {
    array = array.attr("astype")(array.dtype().attr("newbyteorder")("="));
  }
  if (!(array.flags() & py::array::c_style)) {
    array = py::array::ensure(array, py::array::c_style);
  }
  std::vector<int64_t> dims(array.shape(), array.shape() + array.ndim());
  Result<int64_t> count = checked_num_elements(dims);
  if (!count.is_ok()) {
    raise_status(count.status().with_context(what));
  }
  const auto address = reinterpret_cast<uintptr_t>(array.data());
  if (address % kViewAlignment == 0) {
    const void* data = array.data();
    return Tensor::view(dtype, std::move(dims), data, hold(std::move(array)));
  }
  Tensor tensor = unwrap(Tensor::allocate(dtype, std::move(dims)));
  if (tensor.byte_size() > 0) {
    std::memcpy(tensor.mutable_data(), array.data(), tensor.byte_size());
  }
  return tensor;
}

py::array array_from_tensor(Tensor tensor, const std::string& what) {
  // NumPy has no 4-bit or float8 dtype: i8/u8/f32 arrays, as .npy files get
  // (f4e2m1 and f8e8m0 as f32 too).
  if (is_storage_only(tensor.dtype())) {
    tensor = unwrap(npy_compatible(tensor));
  }
  py::dtype type = numpy_dtype(tensor.dtype(), what);
  // Another handle (a weight, a feed, a cache, another result) could see
  // writes through the array: give the array its own storage.
  if (!tensor.is_sole_owner()) tensor = tensor.clone();
  std::vector<py::ssize_t> shape(tensor.dims().begin(), tensor.dims().end());
  // C-order strides given, not left to pybind11 2.10: it would take the
  // element size from NumPy 1's dtype struct (wrong under NumPy 2).
  std::vector<py::ssize_t> strides(shape.size());
  auto stride = static_cast<py::ssize_t>(dtype_size(tensor.dtype()));
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= shape[i];
  }
  auto* owned = new Tensor(std::move(tensor));
  py::capsule owner(
      owned, [](void* pointer) { delete static_cast<Tensor*>(pointer); });
  return py::array(type, std::move(shape), std::move(strides),
                   owned->mutable_data(), owner);
}

std::string onnx_type_string(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return "tensor(float)";
    case DType::kF16:
      return "tensor(float16)";
    case DType::kBF16:
      return "tensor(bfloat16)";
    case DType::kF64:
      return "tensor(double)";
    case DType::kI8:
      return "tensor(int8)";
    case DType::kU8:
      return "tensor(uint8)";
    case DType::kI32:
      return "tensor(int32)";
    case DType::kI64:
      return "tensor(int64)";
    case DType::kBool:
      return "tensor(bool)";
    case DType::kI4:
      return "tensor(int4)";
    case DType::kU4:
      return "tensor(uint4)";
    case DType::kF8E4M3FN:
      return "tensor(float8e4m3fn)";
    case DType::kF8E4M3FNUZ:
      return "tensor(float8e4m3fnuz)";
    case DType::kF8E5M2:
      return "tensor(float8e5m2)";
    case DType::kF8E5M2FNUZ:
      return "tensor(float8e5m2fnuz)";
    case DType::kF8E8M0:
      return "tensor(float8e8m0)";
    case DType::kF4E2M1:
      return "tensor(float4e2m1)";
    case DType::kUndefined:
      break;
  }
  return "tensor(undefined)";
}

}  // namespace seqrt::python
