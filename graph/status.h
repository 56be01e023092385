// Errors are values: every fallible function returns Status or Result<T>.
// Messages name the op, node or file and say what was expected, e.g.
//   "[MatMul] node 'mm0': inner dims differ: A is (2,3), B is (4,5)".
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>

#include <fmt/format.h>

namespace seqrt {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,  // bad user input: shapes, attributes, tensors
  kInvalidModel,     // malformed or inconsistent model file or graph
  kNotFound,         // missing file, op, value, backend
  kUnsupported,      // valid but not supported (op, dtype, backend)
  kOutOfMemory,
  kLimitExceeded,  // a configured resource limit was reached
  kIoError,
  kInternal,  // our own bug
  // The backend is built in but has no device here (no Vulkan driver or
  // device, no CUDA driver or GPU): tests skip on this code alone.
  kNoDevice,
  // A run stopped early: its session's cancel(), or its deadline passed
  // (Limits::run_timeout_ms). The session stays usable.
  kCancelled,
  kDeadlineExceeded,
};

const char* status_code_name(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message)
      : code_(code), message_(std::move(message)) {}

  static Status ok() { return Status(); }

  bool is_ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "invalid model: <message>"
  std::string to_string() const;

  // Prefixes the message with context ("while loading 'x.seqrt': ...").
  Status with_context(const std::string& context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

template <typename... Args>
Status make_error(StatusCode code, fmt::format_string<Args...> format,
                  Args&&... args) {
  return Status(code, fmt::format(format, std::forward<Args>(args)...));
}

template <typename... Args>
Status invalid_argument(fmt::format_string<Args...> format, Args&&... args) {
  return make_error(StatusCode::kInvalidArgument, format,
                    std::forward<Args>(args)...);
}

template <typename... Args>
Status invalid_model(fmt::format_string<Args...> format, Args&&... args) {
  return make_error(StatusCode::kInvalidModel, format,
                    std::forward<Args>(args)...);
}

template <typename... Args>
Status unsupported(fmt::format_string<Args...> format, Args&&... args) {
  return make_error(StatusCode::kUnsupported, format,
                    std::forward<Args>(args)...);
}

template <typename... Args>
Status no_device(fmt::format_string<Args...> format, Args&&... args) {
  return make_error(StatusCode::kNoDevice, format, std::forward<Args>(args)...);
}

template <typename... Args>
Status not_found(fmt::format_string<Args...> format, Args&&... args) {
  return make_error(StatusCode::kNotFound, format, std::forward<Args>(args)...);
}

template <typename... Args>
Status io_error(fmt::format_string<Args...> format, Args&&... args) {
  return make_error(StatusCode::kIoError, format, std::forward<Args>(args)...);
}

template <typename... Args>
Status internal_error(fmt::format_string<Args...> format, Args&&... args) {
  return make_error(StatusCode::kInternal, format, std::forward<Args>(args)...);
}

// Either a value or a non-ok Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : state_(std::move(status)) {  // NOLINT
    assert(!std::get<Status>(state_).is_ok() && "Result from an ok Status");
  }

  bool is_ok() const { return std::holds_alternative<T>(state_); }
  Status status() const {
    return is_ok() ? Status::ok() : std::get<Status>(state_);
  }

  T& value() & { return std::get<T>(state_); }
  const T& value() const& { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }

  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> state_;
};

}  // namespace seqrt

#define SEQRT_CONCAT_INNER(a, b) a##b
#define SEQRT_CONCAT(a, b) SEQRT_CONCAT_INNER(a, b)

// Returns from the enclosing function when `expr` (a Status) is not ok.
#define SEQRT_RETURN_IF_ERROR(expr)                   \
  do {                                                \
    ::seqrt::Status seqrt_status_ = (expr);           \
    if (!seqrt_status_.is_ok()) return seqrt_status_; \
  } while (0)

// `SEQRT_ASSIGN_OR_RETURN(auto x, make_x());` unwraps a Result or returns.
#define SEQRT_ASSIGN_OR_RETURN(lhs, expr) \
  SEQRT_ASSIGN_OR_RETURN_IMPL(SEQRT_CONCAT(seqrt_result_, __LINE__), lhs, expr)
#define SEQRT_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                \
  if (!tmp.is_ok()) return tmp.status();            \
  lhs = std::move(tmp).value()
