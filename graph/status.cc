#include "graph/status.h"

namespace seqrt {

const char* status_code_name(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "ok";
    case StatusCode::kInvalidArgument:
      return "invalid argument";
    case StatusCode::kInvalidModel:
      return "invalid model";
    case StatusCode::kNotFound:
      return "not found";
    case StatusCode::kUnsupported:
      return "unsupported";
    case StatusCode::kOutOfMemory:
      return "out of memory";
    case StatusCode::kLimitExceeded:
      return "limit exceeded";
    case StatusCode::kIoError:
      return "i/o error";
    case StatusCode::kInternal:
      return "internal error";
    case StatusCode::kNoDevice:
      return "no device";
    case StatusCode::kCancelled:
      return "cancelled";
    case StatusCode::kDeadlineExceeded:
      return "deadline exceeded";
  }
  return "unknown";
}

std::string Status::to_string() const {
  if (is_ok()) return "ok";
  return std::string(status_code_name(code_)) + ": " + message_;
}

Status Status::with_context(const std::string& context) const {
  if (is_ok()) return *this;
  return Status(code_, context + ": " + message_);
}

}  // namespace seqrt
