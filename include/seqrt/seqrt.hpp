// seqrt C++ API: header-only RAII wrappers over the C API (seqrt.h). Each
// class owns one C handle and releases it in its destructor; classes are
// movable, not copyable. Failures throw seqrt::Error, which carries the C
// status code and the message. Thread-safety is the C API's: Model,
// Session and the tensors runs return may be shared between threads (and
// Session::run called from many at once); a Stream belongs to one thread.
//
//   seqrt::Model model = seqrt::Model::load_file("model.seqrt");
//   seqrt::Session session(model, seqrt::SessionOptions().backend("cpu"));
//   seqrt::Stream stream(session);
//   std::vector<float> prompt(1 * 2 * 5 * 8);
//   seqrt::Tensor x = seqrt::Tensor::borrow<float>({1, 2, 5, 8}, prompt);
//   std::vector<seqrt::Tensor> out = stream.prefill({{"x", x}}, {"y"});
//   const float* y = out[0].data_as<float>();
//   ...then stream.step(...) once per new position...
#ifndef SEQRT_SEQRT_HPP_
#define SEQRT_SEQRT_HPP_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "seqrt/seqrt.h"

namespace seqrt {
// The runtime's own C++ code also lives in namespace seqrt and has classes of
// the same names (seqrt::Tensor, Session, Stream). This inline namespace
// gives the wrappers distinct symbols, so a program that links both never
// mixes up their inline functions, while users still write seqrt::Tensor.
inline namespace api {

// A failed C call: code() is its seqrt_status, what() its message.
class Error : public std::runtime_error {
 public:
  Error(seqrt_status code, const std::string& message)
      : std::runtime_error(message), code_(code) {}
  seqrt_status code() const noexcept { return code_; }

 private:
  seqrt_status code_;
};

namespace detail {

inline void check(seqrt_status status) {
  if (status != SEQRT_OK) throw Error(status, seqrt_last_error_message());
}

// Owns one C handle, released by `Release`.
template <typename Handle, void (*Release)(Handle*)>
class Owned {
 public:
  Owned() = default;
  explicit Owned(Handle* handle) : handle_(handle) {}
  Handle* get() const noexcept { return handle_.get(); }
  Handle* release() noexcept { return handle_.release(); }

 private:
  struct Deleter {
    void operator()(Handle* handle) const noexcept { Release(handle); }
  };
  std::unique_ptr<Handle, Deleter> handle_;
};

template <typename T>
constexpr seqrt_dtype dtype_of();
template <>
constexpr seqrt_dtype dtype_of<float>() {
  return SEQRT_DTYPE_F32;
}
template <>
constexpr seqrt_dtype dtype_of<double>() {
  return SEQRT_DTYPE_F64;
}
template <>
constexpr seqrt_dtype dtype_of<int8_t>() {
  return SEQRT_DTYPE_I8;
}
template <>
constexpr seqrt_dtype dtype_of<uint8_t>() {
  return SEQRT_DTYPE_U8;
}
template <>
constexpr seqrt_dtype dtype_of<int32_t>() {
  return SEQRT_DTYPE_I32;
}
template <>
constexpr seqrt_dtype dtype_of<int64_t>() {
  return SEQRT_DTYPE_I64;
}
template <>
constexpr seqrt_dtype dtype_of<bool>() {
  static_assert(sizeof(bool) == 1, "seqrt bool tensors are one byte");
  return SEQRT_DTYPE_BOOL;
}

}  // namespace detail

// A host tensor: an owned copy, the caller's memory borrowed without a copy
// (keep it alive and unchanged while the Tensor and its runs live), or a
// run's output.
class Tensor {
 public:
  Tensor() = default;
  // Takes ownership of `handle` (a run's output, for example).
  explicit Tensor(seqrt_tensor* handle) : handle_(handle) {}

  // A copy of `bytes` bytes of `data` (NULL: zeros).
  static Tensor create(seqrt_dtype dtype, const std::vector<int64_t>& dims,
                       const void* data, size_t bytes) {
    seqrt_tensor* handle = nullptr;
    detail::check(seqrt_tensor_create(dtype, dims.data(), dims.size(), data,
                                      bytes, &handle));
    return Tensor(handle);
  }
  template <typename T>
  static Tensor from_vector(const std::vector<int64_t>& dims,
                            const std::vector<T>& values) {
    return create(detail::dtype_of<T>(), dims, values.data(),
                  values.size() * sizeof(T));
  }
  // No copy: the tensor reads `data` in place.
  static Tensor borrow(seqrt_dtype dtype, const std::vector<int64_t>& dims,
                       const void* data, size_t bytes) {
    seqrt_tensor* handle = nullptr;
    detail::check(seqrt_tensor_borrow(dtype, dims.data(), dims.size(), data,
                                      bytes, &handle));
    return Tensor(handle);
  }
  template <typename T>
  static Tensor borrow(const std::vector<int64_t>& dims,
                       const std::vector<T>& values) {
    return borrow(detail::dtype_of<T>(), dims, values.data(),
                  values.size() * sizeof(T));
  }

  seqrt_tensor* get() const noexcept { return handle_.get(); }

  seqrt_dtype dtype() const {
    seqrt_dtype dtype = SEQRT_DTYPE_UNDEFINED;
    detail::check(seqrt_tensor_dtype(get(), &dtype));
    return dtype;
  }
  std::vector<int64_t> dims() const {
    const int64_t* dims = nullptr;
    size_t rank = 0;
    detail::check(seqrt_tensor_shape(get(), &dims, &rank));
    return std::vector<int64_t>(dims, dims + rank);
  }
  int64_t element_count() const {
    int64_t count = 0;
    detail::check(seqrt_tensor_element_count(get(), &count));
    return count;
  }
  const void* data() const {
    const void* data = nullptr;
    detail::check(seqrt_tensor_data(get(), &data));
    return data;
  }
  // The data as T; throws when T is not the tensor's dtype.
  template <typename T>
  const T* data_as() const {
    if (dtype() != detail::dtype_of<T>()) {
      throw Error(SEQRT_INVALID_ARGUMENT,
                  std::string("tensor is ") + seqrt_dtype_name(dtype()) +
                      ", read as " + seqrt_dtype_name(detail::dtype_of<T>()));
    }
    return static_cast<const T*>(data());
  }
  template <typename T>
  std::vector<T> to_vector() const {
    const T* values = data_as<T>();
    return std::vector<T>(values, values + element_count());
  }

 private:
  detail::Owned<seqrt_tensor, seqrt_tensor_release> handle_;
};

// A named input of a run; the tensor is borrowed for the call.
struct Feed {
  Feed(std::string feed_name, const Tensor& feed_tensor)
      : name(std::move(feed_name)), tensor(&feed_tensor) {}
  std::string name;
  const Tensor* tensor;
};

// An input or output as the model declares it. dims[i] is -1 where the dim
// is not fixed; symbols[i] names it when symbolic ("" otherwise). rank is
// -1 when the model does not fix it.
struct ValueInfo {
  std::string name;
  seqrt_dtype dtype = SEQRT_DTYPE_UNDEFINED;
  int64_t rank = -1;
  std::vector<int64_t> dims;
  std::vector<std::string> symbols;
};

class Model {
 public:
  static Model load_file(const std::string& path) {
    seqrt_model* handle = nullptr;
    detail::check(seqrt_model_load_file(path.c_str(), &handle));
    return Model(handle);
  }
  // `flags`: seqrt_load_flag bits, e.g. SEQRT_LOAD_COPY to read the file
  // into memory instead of mapping it (the file may then change).
  static Model load_file(const std::string& path, uint32_t flags) {
    seqrt_model* handle = nullptr;
    detail::check(
        seqrt_model_load_file_with_flags(path.c_str(), flags, &handle));
    return Model(handle);
  }
  // The bytes are copied; `data` may be freed on return.
  static Model load_memory(const void* data, size_t size) {
    seqrt_model* handle = nullptr;
    detail::check(seqrt_model_load_memory(data, size, &handle));
    return Model(handle);
  }

  seqrt_model* get() const noexcept { return handle_.get(); }

  std::string name() const {
    const char* name = nullptr;
    detail::check(seqrt_model_name(get(), &name));
    return name;
  }
  std::vector<ValueInfo> inputs() const { return values(SEQRT_IO_INPUT); }
  std::vector<ValueInfo> outputs() const { return values(SEQRT_IO_OUTPUT); }
  // (past_* input, present_* output) names.
  std::vector<std::pair<std::string, std::string>> state_pairs() const {
    size_t count = 0;
    detail::check(seqrt_model_state_pair_count(get(), &count));
    std::vector<std::pair<std::string, std::string>> pairs;
    for (size_t i = 0; i < count; ++i) {
      const char* input = nullptr;
      const char* output = nullptr;
      detail::check(seqrt_model_state_pair(get(), i, &input, &output));
      pairs.emplace_back(input, output);
    }
    return pairs;
  }
  std::optional<std::string> metadata(const std::string& key) const {
    const char* value = nullptr;
    seqrt_status status = seqrt_model_metadata(get(), key.c_str(), &value);
    if (status == SEQRT_NOT_FOUND) return std::nullopt;
    detail::check(status);
    return std::string(value);
  }
  std::map<std::string, std::string> metadata() const {
    size_t count = 0;
    detail::check(seqrt_model_metadata_count(get(), &count));
    std::map<std::string, std::string> entries;
    for (size_t i = 0; i < count; ++i) {
      const char* key = nullptr;
      detail::check(seqrt_model_metadata_key(get(), i, &key));
      entries[key] = *metadata(key);
    }
    return entries;
  }
  size_t op_count() const {
    size_t count = 0;
    detail::check(seqrt_model_op_count(get(), &count));
    return count;
  }

 private:
  explicit Model(seqrt_model* handle) : handle_(handle) {}

  std::vector<ValueInfo> values(seqrt_io_kind kind) const {
    size_t count = 0;
    detail::check(seqrt_model_io_count(get(), kind, &count));
    std::vector<ValueInfo> infos(count);
    for (size_t i = 0; i < count; ++i) {
      ValueInfo& info = infos[i];
      const char* name = nullptr;
      detail::check(seqrt_model_io_name(get(), kind, i, &name));
      info.name = name;
      detail::check(seqrt_model_io_dtype(get(), kind, i, &info.dtype));
      detail::check(seqrt_model_io_rank(get(), kind, i, &info.rank));
      for (int64_t axis = 0; axis < info.rank; ++axis) {
        int64_t size = -1;
        const char* symbol = nullptr;
        detail::check(seqrt_model_io_dim(
            get(), kind, i, static_cast<size_t>(axis), &size, &symbol));
        info.dims.push_back(size);
        info.symbols.emplace_back(symbol ? symbol : "");
      }
    }
    return infos;
  }

  detail::Owned<seqrt_model, seqrt_model_release> handle_;
};

// Chained setters: SessionOptions().backend("cpu").threads(2).
class SessionOptions {
 public:
  SessionOptions() {
    seqrt_session_options* handle = nullptr;
    detail::check(seqrt_session_options_create(&handle));
    handle_ = Handle(handle);
  }

  seqrt_session_options* get() const noexcept { return handle_.get(); }

  SessionOptions& backend(const std::string& name) {
    detail::check(seqrt_session_options_set_backend(get(), name.c_str()));
    return *this;
  }
  SessionOptions& device_index(int index) {
    detail::check(seqrt_session_options_set_device_index(get(), index));
    return *this;
  }
  // seqrt_session_options_set_backend_option: backend_option("fp16_weights",
  // "1").
  SessionOptions& backend_option(const std::string& key,
                                 const std::string& value) {
    detail::check(seqrt_session_options_set_backend_option(get(), key.c_str(),
                                                           value.c_str()));
    return *this;
  }
  SessionOptions& threads(int count) {
    detail::check(seqrt_session_options_set_threads(get(), count));
    return *this;
  }
  SessionOptions& bind_dim(const std::string& name, int64_t size) {
    detail::check(seqrt_session_options_bind_dim(get(), name.c_str(), size));
    return *this;
  }
  SessionOptions& optimize(bool on) {
    detail::check(seqrt_session_options_set_optimize(get(), on ? 1 : 0));
    return *this;
  }
  // One resource limit (seqrt_limit in seqrt.h).
  SessionOptions& limit(seqrt_limit which, int64_t value) {
    detail::check(seqrt_session_options_set_limit(get(), which, value));
    return *this;
  }
  // Each run (and stream step) fails with SEQRT_DEADLINE_EXCEEDED after
  // this many milliseconds; 0: no deadline.
  SessionOptions& run_timeout_ms(int64_t milliseconds) {
    return limit(SEQRT_LIMIT_RUN_TIMEOUT_MS, milliseconds);
  }

 private:
  using Handle =
      detail::Owned<seqrt_session_options, seqrt_session_options_release>;
  Handle handle_;
};

// Figures of a memory plan (bytes).
struct MemoryPlanSizes {
  int64_t peak_arena_bytes = 0;
  int64_t naive_bytes = 0;
};

namespace detail {

struct RunArgs {
  std::vector<const char*> input_names;
  std::vector<const seqrt_tensor*> inputs;
  std::vector<const char*> output_names;
  std::vector<seqrt_tensor*> outputs;
};

inline RunArgs run_args(const std::vector<Feed>& feeds,
                        const std::vector<std::string>& output_names) {
  RunArgs args;
  for (const Feed& feed : feeds) {
    args.input_names.push_back(feed.name.c_str());
    args.inputs.push_back(feed.tensor->get());
  }
  for (const std::string& name : output_names) {
    args.output_names.push_back(name.c_str());
  }
  args.outputs.assign(output_names.size(), nullptr);
  return args;
}

inline std::vector<Tensor> take_outputs(const RunArgs& args) {
  std::vector<Tensor> tensors;
  tensors.reserve(args.outputs.size());
  for (seqrt_tensor* handle : args.outputs) tensors.emplace_back(handle);
  return tensors;
}

}  // namespace detail

class Session {
 public:
  explicit Session(const Model& model,
                   const SessionOptions& options = SessionOptions()) {
    seqrt_session* handle = nullptr;
    detail::check(seqrt_session_create(model.get(), options.get(), &handle));
    handle_ = Handle(handle);
  }

  seqrt_session* get() const noexcept { return handle_.get(); }

  // The requested outputs, in the order of `output_names`. Thread-safe.
  std::vector<Tensor> run(const std::vector<Feed>& feeds,
                          const std::vector<std::string>& output_names) const {
    detail::RunArgs args = detail::run_args(feeds, output_names);
    detail::check(seqrt_session_run(
        get(), args.input_names.data(), args.inputs.data(), args.inputs.size(),
        args.output_names.data(), args.outputs.data(), args.outputs.size()));
    return detail::take_outputs(args);
  }

  // Stops the runs in flight on this session (from other threads): they
  // throw Error with code() SEQRT_CANCELLED. Thread-safe.
  void cancel() const { detail::check(seqrt_session_cancel(get())); }

  std::string backend_name() const {
    const char* name = nullptr;
    detail::check(seqrt_session_backend_name(get(), &name));
    return name;
  }
  std::string device_name() const {
    const char* name = nullptr;
    detail::check(seqrt_session_device_name(get(), &name));
    return name;
  }
  MemoryPlanSizes memory_plan(
      const std::map<std::string, int64_t>& bindings = {}) const {
    std::vector<const char*> names;
    std::vector<int64_t> sizes;
    for (const auto& binding : bindings) {
      names.push_back(binding.first.c_str());
      sizes.push_back(binding.second);
    }
    MemoryPlanSizes plan;
    detail::check(seqrt_session_memory_plan(
        get(), names.data(), sizes.data(), names.size(), &plan.peak_arena_bytes,
        &plan.naive_bytes));
    return plan;
  }

 private:
  using Handle = detail::Owned<seqrt_session, seqrt_session_release>;
  Handle handle_;
};

// A stream's saved state (immutable).
class Snapshot {
 public:
  // Takes ownership of `handle`.
  explicit Snapshot(seqrt_snapshot* handle) : handle_(handle) {}
  seqrt_snapshot* get() const noexcept { return handle_.get(); }

 private:
  detail::Owned<seqrt_snapshot, seqrt_snapshot_release> handle_;
};

// One sequence's state on a Session (kept alive by the Stream).
class Stream {
 public:
  explicit Stream(const Session& session) {
    seqrt_stream* handle = nullptr;
    detail::check(seqrt_stream_create(session.get(), &handle));
    handle_ = Handle(handle);
  }

  seqrt_stream* get() const noexcept { return handle_.get(); }

  std::vector<Tensor> prefill(const std::vector<Feed>& feeds,
                              const std::vector<std::string>& output_names) {
    return run(seqrt_stream_prefill, feeds, output_names);
  }
  // A run of one position (see seqrt_stream_step).
  std::vector<Tensor> step(const std::vector<Feed>& feeds,
                           const std::vector<std::string>& output_names) {
    return run(seqrt_stream_step, feeds, output_names);
  }
  Snapshot snapshot() const {
    seqrt_snapshot* handle = nullptr;
    detail::check(seqrt_stream_snapshot(get(), &handle));
    return Snapshot(handle);
  }
  void restore(const Snapshot& snapshot) {
    detail::check(seqrt_stream_restore(get(), snapshot.get()));
  }
  void reset() { detail::check(seqrt_stream_reset(get())); }

 private:
  using Handle = detail::Owned<seqrt_stream, seqrt_stream_release>;
  using RunFn = seqrt_status (*)(seqrt_stream*, const char* const*,
                                 const seqrt_tensor* const*, size_t,
                                 const char* const*, seqrt_tensor**, size_t);

  std::vector<Tensor> run(RunFn function, const std::vector<Feed>& feeds,
                          const std::vector<std::string>& output_names) {
    detail::RunArgs args = detail::run_args(feeds, output_names);
    detail::check(function(get(), args.input_names.data(), args.inputs.data(),
                           args.inputs.size(), args.output_names.data(),
                           args.outputs.data(), args.outputs.size()));
    return detail::take_outputs(args);
  }

  Handle handle_;
};

// The library's version ("0.1.0").
inline std::string version() { return seqrt_version(); }

}  // namespace api
}  // namespace seqrt

#endif  // SEQRT_SEQRT_HPP_
