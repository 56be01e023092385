// What the C API's opaque handles hold, and the helpers every C entry point
// shares: the exception guard that turns any failure into a seqrt_status
// plus the thread's last message, and the checks of C arguments.
#pragma once

#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/status.h"
#include "graph/tensor.h"
#include "runtime/session.h"
#include "runtime/stream.h"
#include "seqrt/seqrt.h"

struct seqrt_tensor {
  seqrt::Tensor tensor;
  // Only tensors made by seqrt_tensor_create hand out writable bytes:
  // borrowed memory is the caller's, and run outputs may share storage.
  bool writable = false;
};

struct seqrt_model {
  seqrt::Graph graph;
  std::vector<std::string> metadata_keys;  // sorted, for index access
};

struct seqrt_session_options {
  seqrt::SessionOptions options;
};

struct seqrt_session {
  // Shared so that streams keep their session alive (seqrt_stream_create).
  std::shared_ptr<const seqrt::Session> session;
};

struct seqrt_stream {
  explicit seqrt_stream(std::shared_ptr<const seqrt::Session> owner)
      : session(std::move(owner)), stream(*session) {}
  std::shared_ptr<const seqrt::Session> session;
  seqrt::Stream stream;  // borrows *session, declared after it
};

struct seqrt_snapshot {
  std::map<std::string, seqrt::Tensor> state;
};

namespace seqrt::c_api {

// Records `status` as the calling thread's last error, prefixed with the C
// function's name, and returns its C code (SEQRT_OK for an ok status).
seqrt_status report(const char* function, const Status& status);

// Runs `body` (returning Status) so that no exception escapes: bad_alloc is
// SEQRT_OUT_OF_MEMORY, anything else SEQRT_INTERNAL.
// A C caller may pass any int where the API takes an enum, but C++ may not
// read an enum object holding a value outside the enum's range; the bytes
// are read as an int instead, to be checked against the enumerators.
template <typename Enum>
int c_enum_value(const Enum& value) {
  static_assert(sizeof(Enum) == sizeof(int), "C enums are int-sized");
  int raw = 0;
  std::memcpy(&raw, &value, sizeof raw);
  return raw;
}

template <typename Body>
seqrt_status guarded(const char* function, Body&& body) noexcept {
  try {
    return report(function, body());
  } catch (const std::bad_alloc&) {
    return report(function, Status(StatusCode::kOutOfMemory, "out of memory"));
  } catch (const std::exception& error) {
    return report(function,
                  internal_error("unexpected exception: {}", error.what()));
  } catch (...) {
    return report(function, internal_error("unexpected non-standard "
                                           "exception"));
  }
}

// kInvalidArgument "<what> is NULL" when `pointer` is null.
Status require(const void* pointer, const char* what);

// Feeds from parallel C arrays of names and tensors; names must be unique.
Result<std::map<std::string, Tensor>> collect_feeds(
    const char* const* names, const seqrt_tensor* const* tensors, size_t count);

// Moves the requested `names` from `results` into new owned handles in
// `outputs`. Checks every name first, so on failure nothing is written.
// `held_state` lists names a stream keeps rather than returns.
Status hand_out_outputs(std::map<std::string, Tensor> results,
                        const char* const* names, seqrt_tensor** outputs,
                        size_t count,
                        const std::vector<std::string>& held_state);

}  // namespace seqrt::c_api
