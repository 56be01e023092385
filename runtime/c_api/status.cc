// Status codes, the thread's last error message, versions and dtypes of the
// C API, plus the argument helpers every entry point shares.
#include <set>
#include <string>

#include "runtime/c_api/handles.h"

namespace seqrt::c_api {
namespace {

// Per thread, so that concurrent runs never see each other's errors.
thread_local std::string last_error;

seqrt_status to_c_status(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return SEQRT_OK;
    case StatusCode::kInvalidArgument:
      return SEQRT_INVALID_ARGUMENT;
    case StatusCode::kInvalidModel:
      return SEQRT_INVALID_MODEL;
    case StatusCode::kNotFound:
      return SEQRT_NOT_FOUND;
    case StatusCode::kUnsupported:
      return SEQRT_UNSUPPORTED;
    case StatusCode::kOutOfMemory:
      return SEQRT_OUT_OF_MEMORY;
    case StatusCode::kLimitExceeded:
      return SEQRT_LIMIT_EXCEEDED;
    case StatusCode::kIoError:
      return SEQRT_IO_ERROR;
    case StatusCode::kInternal:
      return SEQRT_INTERNAL;
    case StatusCode::kNoDevice:  // the C API keeps its codes: unsupported here
      return SEQRT_UNSUPPORTED;
    case StatusCode::kCancelled:
      return SEQRT_CANCELLED;
    case StatusCode::kDeadlineExceeded:
      return SEQRT_DEADLINE_EXCEEDED;
  }
  return SEQRT_INTERNAL;
}

}  // namespace

seqrt_status report(const char* function, const Status& status) {
  if (status.is_ok()) return SEQRT_OK;
  // Assigning may itself throw bad_alloc; the code still tells the caller.
  try {
    last_error = std::string(function) + ": " + status.message();
  } catch (...) {
    last_error.clear();
  }
  return to_c_status(status.code());
}

Status require(const void* pointer, const char* what) {
  if (pointer != nullptr) return Status::ok();
  return invalid_argument("{} is NULL", what);
}

Result<std::map<std::string, Tensor>> collect_feeds(
    const char* const* names, const seqrt_tensor* const* tensors,
    size_t count) {
  std::map<std::string, Tensor> feeds;
  if (count == 0) return feeds;
  SEQRT_RETURN_IF_ERROR(require(names, "input_names"));
  SEQRT_RETURN_IF_ERROR(require(tensors, "inputs"));
  for (size_t i = 0; i < count; ++i) {
    if (names[i] == nullptr)
      return invalid_argument("input_names[{}] is NULL", i);
    if (tensors[i] == nullptr) return invalid_argument("inputs[{}] is NULL", i);
    if (!feeds.emplace(names[i], tensors[i]->tensor).second) {
      return invalid_argument("input '{}' is fed twice", names[i]);
    }
  }
  return feeds;
}

Status hand_out_outputs(std::map<std::string, Tensor> results,
                        const char* const* names, seqrt_tensor** outputs,
                        size_t count,
                        const std::vector<std::string>& held_state) {
  if (count == 0) return Status::ok();
  SEQRT_RETURN_IF_ERROR(require(names, "output_names"));
  SEQRT_RETURN_IF_ERROR(require(outputs, "outputs"));
  std::vector<std::unique_ptr<seqrt_tensor>> handles;
  for (size_t i = 0; i < count; ++i) {
    if (names[i] == nullptr)
      return invalid_argument("output_names[{}] is NULL", i);
    auto found = results.find(names[i]);
    if (found != results.end()) {
      handles.push_back(std::make_unique<seqrt_tensor>());
      handles.back()->tensor = found->second;
      continue;
    }
    for (const std::string& state : held_state) {
      if (state == names[i]) {
        return not_found(
            "'{}' is a state output: the stream keeps it as its state (use "
            "seqrt_stream_snapshot to read it)",
            state);
      }
    }
    std::set<std::string> known;
    for (const auto& [name, tensor] : results) known.insert(name);
    return not_found("no output '{}'; the outputs are: {}", names[i],
                     fmt::join(known, ", "));
  }
  for (size_t i = 0; i < count; ++i) outputs[i] = handles[i].release();
  return Status::ok();
}

}  // namespace seqrt::c_api

extern "C" {

const char* seqrt_last_error_message(void) {
  return seqrt::c_api::last_error.c_str();
}

const char* seqrt_status_name(seqrt_status status) {
  switch (seqrt::c_api::c_enum_value(status)) {
    case SEQRT_OK:
      return "ok";
    case SEQRT_INVALID_ARGUMENT:
      return "invalid argument";
    case SEQRT_INVALID_MODEL:
      return "invalid model";
    case SEQRT_NOT_FOUND:
      return "not found";
    case SEQRT_UNSUPPORTED:
      return "unsupported";
    case SEQRT_OUT_OF_MEMORY:
      return "out of memory";
    case SEQRT_LIMIT_EXCEEDED:
      return "limit exceeded";
    case SEQRT_IO_ERROR:
      return "I/O error";
    case SEQRT_INTERNAL:
      return "internal error";
    case SEQRT_CANCELLED:
      return "cancelled";
    case SEQRT_DEADLINE_EXCEEDED:
      return "deadline exceeded";
  }
  return "unknown status";
}

const char* seqrt_version(void) { return SEQRT_VERSION_STRING; }

int seqrt_abi_version(void) { return SEQRT_ABI_VERSION; }

const char* seqrt_dtype_name(seqrt_dtype dtype) {
  const int value = seqrt::c_api::c_enum_value(dtype);
  if (value <= SEQRT_DTYPE_UNDEFINED || value > SEQRT_DTYPE_F4E2M1) {
    return "undefined";
  }
  return seqrt::dtype_name(static_cast<seqrt::DType>(value));
}

size_t seqrt_dtype_size(seqrt_dtype dtype) {
  const int value = seqrt::c_api::c_enum_value(dtype);
  if (value <= SEQRT_DTYPE_UNDEFINED || value > SEQRT_DTYPE_F4E2M1) return 0;
  return seqrt::dtype_size(static_cast<seqrt::DType>(value));
}

}  // extern "C"
