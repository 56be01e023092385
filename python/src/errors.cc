#include "python/src/errors.h"

namespace py = pybind11;

namespace seqrt::python {
namespace {

const char* class_name(StatusCode code) {
  switch (code) {
    case StatusCode::kInvalidArgument:
      return "InvalidArgumentError";
    case StatusCode::kInvalidModel:
      return "InvalidModelError";
    case StatusCode::kNotFound:
      return "NotFoundError";
    case StatusCode::kUnsupported:
    case StatusCode::kNoDevice:  // a backend unsupported on this machine
      return "UnsupportedError";
    case StatusCode::kOutOfMemory:
      return "OutOfMemoryError";
    case StatusCode::kLimitExceeded:
      return "LimitExceededError";
    case StatusCode::kIoError:
      return "IoError";
    case StatusCode::kCancelled:
      return "CancelledError";
    case StatusCode::kDeadlineExceeded:
      return "DeadlineExceededError";
    case StatusCode::kOk:
    case StatusCode::kInternal:
      break;
  }
  return "InternalError";
}

[[noreturn]] void raise(const char* name, const std::string& message) {
  // Imported when needed, not at module init: seqrt/__init__.py imports
  // this extension before the package is complete.
  py::object type = py::module_::import("seqrt._errors").attr(name);
  PyErr_SetString(type.ptr(), message.c_str());
  throw py::error_already_set();
}

}  // namespace

void raise_status(const Status& status) {
  raise(class_name(status.code()), status.message());
}

void raise_model_not_found(const std::string& message) {
  raise("ModelNotFoundError", message);
}

}  // namespace seqrt::python
