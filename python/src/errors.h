// Status -> Python exception. Each StatusCode has a class in
// seqrt/_errors.py that also derives from the built-in exception a Python
// user would catch for it (ValueError for bad input, and so on).
#pragma once

#include <string>
#include <utility>

#include <pybind11/pybind11.h>

#include "graph/status.h"

namespace seqrt::python {

// Raises the Python exception for `status` (which must not be ok) with the
// runtime's message. Needs the GIL.
[[noreturn]] void raise_status(const Status& status);
// Raises seqrt.ModelNotFoundError (a FileNotFoundError) with `message`.
[[noreturn]] void raise_model_not_found(const std::string& message);

// The value of `result`, or raises its status.
template <typename T>
T unwrap(Result<T> result) {
  if (!result.is_ok()) raise_status(result.status());
  return std::move(result).value();
}

inline void check(const Status& status) {
  if (!status.is_ok()) raise_status(status);
}

// str(object), for messages.
inline std::string text(pybind11::handle object) {
  return pybind11::str(object).cast<std::string>();
}

}  // namespace seqrt::python
