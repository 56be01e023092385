// seqrt_session_options_* and seqrt_session_*: compiling a model for one
// backend and running the compiled plan.
#include "compiler/planner/memory_plan.h"
#include "graph/alloc_fault.h"
#include "runtime/backend_registry.h"
#include "runtime/c_api/handles.h"

namespace seqrt::c_api {
namespace {

Status create_session(const seqrt_model* model,
                      const seqrt_session_options* options,
                      seqrt_session** out) {
  SEQRT_RETURN_IF_ERROR(require(model, "model"));
  SEQRT_RETURN_IF_ERROR(require(out, "out"));
  seqrt_session_options defaults;
  defaults.options.backend = default_backend();
  const seqrt_session_options& chosen = options ? *options : defaults;
  // The graph copy shares the model's weights, so the model may go first.
  SEQRT_ASSIGN_OR_RETURN(std::unique_ptr<Session> session,
                         Session::create(model->graph, chosen.options));
  auto handle = std::make_unique<seqrt_session>();
  handle->session = std::move(session);
  *out = handle.release();
  return Status::ok();
}

Status run_session(const seqrt_session* session, const char* const* input_names,
                   const seqrt_tensor* const* inputs, size_t input_count,
                   const char* const* output_names, seqrt_tensor** outputs,
                   size_t output_count) {
  SEQRT_RETURN_IF_ERROR(require(session, "session"));
  SEQRT_ASSIGN_OR_RETURN(auto feeds,
                         collect_feeds(input_names, inputs, input_count));
  // Output arguments are checked before the run, not after it.
  if (output_count > 0) {
    SEQRT_RETURN_IF_ERROR(require(output_names, "output_names"));
    SEQRT_RETURN_IF_ERROR(require(outputs, "outputs"));
  }
  SEQRT_ASSIGN_OR_RETURN(auto results, session->session->run(std::move(feeds)));
  return hand_out_outputs(std::move(results), output_names, outputs,
                          output_count, {});
}

Status memory_plan(const seqrt_session* session, const char* const* dim_names,
                   const int64_t* dim_sizes, size_t dim_count, int64_t* peak,
                   int64_t* naive) {
  SEQRT_RETURN_IF_ERROR(require(session, "session"));
  SEQRT_RETURN_IF_ERROR(require(peak, "peak_arena_bytes"));
  SEQRT_RETURN_IF_ERROR(require(naive, "naive_bytes"));
  std::map<std::string, int64_t> bindings =
      session->session->options().compile.dim_bindings;
  if (dim_count > 0) {
    SEQRT_RETURN_IF_ERROR(require(dim_names, "dim_names"));
    SEQRT_RETURN_IF_ERROR(require(dim_sizes, "dim_sizes"));
  }
  for (size_t i = 0; i < dim_count; ++i) {
    if (dim_names[i] == nullptr) {
      return invalid_argument("dim_names[{}] is NULL", i);
    }
    if (dim_sizes[i] < 0) {
      return invalid_argument("dim '{}' bound to {}; sizes must be >= 0",
                              dim_names[i], dim_sizes[i]);
    }
    bindings[dim_names[i]] = dim_sizes[i];
  }
  SEQRT_ASSIGN_OR_RETURN(MemoryPlan plan,
                         plan_memory(session->session->graph(), bindings));
  *peak = plan.peak_arena_bytes;
  *naive = plan.naive_arena_bytes;
  return Status::ok();
}

}  // namespace
}  // namespace seqrt::c_api

using seqrt::Status;
using seqrt::c_api::guarded;
using seqrt::c_api::require;

extern "C" {

seqrt_status seqrt_session_options_create(seqrt_session_options** out) {
  return guarded(__func__, [&] {
    SEQRT_RETURN_IF_ERROR(require(out, "out"));
    auto handle = std::make_unique<seqrt_session_options>();
    handle->options.backend = seqrt::default_backend();
    *out = handle.release();
    return Status::ok();
  });
}

void seqrt_session_options_release(seqrt_session_options* options) {
  delete options;
}

seqrt_status seqrt_session_options_set_backend(seqrt_session_options* options,
                                               const char* backend) {
  return guarded(__func__, [&] {
    SEQRT_RETURN_IF_ERROR(require(options, "options"));
    SEQRT_RETURN_IF_ERROR(require(backend, "backend"));
    options->options.backend = backend;
    return Status::ok();
  });
}

seqrt_status seqrt_session_options_set_device_index(
    seqrt_session_options* options, int device_index) {
  return guarded(__func__, [&]() -> Status {
    SEQRT_RETURN_IF_ERROR(require(options, "options"));
    if (device_index < 0) {
      return seqrt::invalid_argument("device index {} is negative",
                                     device_index);
    }
    options->options.backend_options.device = device_index;
    return Status::ok();
  });
}

seqrt_status seqrt_session_options_set_backend_option(
    seqrt_session_options* options, const char* key, const char* value) {
  return guarded(__func__, [&]() -> Status {
    SEQRT_RETURN_IF_ERROR(require(options, "options"));
    SEQRT_RETURN_IF_ERROR(require(key, "key"));
    SEQRT_RETURN_IF_ERROR(require(value, "value"));
    return seqrt::set_backend_option(options->options.backend_options, key,
                                     value);
  });
}

seqrt_status seqrt_session_options_set_threads(seqrt_session_options* options,
                                               int threads) {
  return guarded(__func__, [&]() -> Status {
    SEQRT_RETURN_IF_ERROR(require(options, "options"));
    if (threads < 0) {
      return seqrt::invalid_argument("thread count {} is negative", threads);
    }
    options->options.compile.num_threads = threads;
    return Status::ok();
  });
}

seqrt_status seqrt_session_options_bind_dim(seqrt_session_options* options,
                                            const char* name, int64_t size) {
  return guarded(__func__, [&]() -> Status {
    SEQRT_RETURN_IF_ERROR(require(options, "options"));
    SEQRT_RETURN_IF_ERROR(require(name, "name"));
    if (size < 0) {
      return seqrt::invalid_argument("dim '{}' bound to {}; sizes must be >= 0",
                                     name, size);
    }
    options->options.compile.dim_bindings[name] = size;
    return Status::ok();
  });
}

seqrt_status seqrt_session_options_set_optimize(seqrt_session_options* options,
                                                int optimize) {
  return guarded(__func__, [&] {
    SEQRT_RETURN_IF_ERROR(require(options, "options"));
    options->options.optimize = optimize != 0;
    return Status::ok();
  });
}

seqrt_status seqrt_session_options_set_kv_cache_capacity(
    seqrt_session_options* options, int64_t tokens) {
  return guarded(__func__, [&] {
    SEQRT_RETURN_IF_ERROR(require(options, "options"));
    if (tokens < 0) {
      return seqrt::invalid_argument("kv_cache_capacity must be >= 0, got {}",
                                     tokens);
    }
    options->options.kv_cache_capacity = tokens;
    return Status::ok();
  });
}

static_assert(static_cast<int>(seqrt::LimitKind::kMaxTensorBytes) ==
                      SEQRT_LIMIT_MAX_TENSOR_BYTES &&
                  static_cast<int>(seqrt::LimitKind::kMemoryBudgetBytes) ==
                      SEQRT_LIMIT_MEMORY_BUDGET &&
                  static_cast<int>(seqrt::LimitKind::kRunTimeoutMs) ==
                      SEQRT_LIMIT_RUN_TIMEOUT_MS,
              "seqrt_limit follows seqrt::LimitKind");

seqrt_status seqrt_session_options_set_limit(seqrt_session_options* options,
                                             seqrt_limit limit, int64_t value) {
  return guarded(__func__, [&] {
    SEQRT_RETURN_IF_ERROR(require(options, "options"));
    const int kind = seqrt::c_api::c_enum_value(limit);
    if (kind < SEQRT_LIMIT_MAX_TENSOR_BYTES ||
        kind > SEQRT_LIMIT_RUN_TIMEOUT_MS) {
      return seqrt::invalid_argument("unknown limit {}", kind);
    }
    // The C enum follows seqrt::LimitKind's order.
    return seqrt::set_limit(options->options.limits,
                            static_cast<seqrt::LimitKind>(kind), value);
  });
}

void seqrt_testing_fail_host_allocation(int64_t nth) {
  seqrt::fail_host_allocation(nth);
}

seqrt_status seqrt_session_create(const seqrt_model* model,
                                  const seqrt_session_options* options,
                                  seqrt_session** out) {
  return guarded(__func__, [&] {
    return seqrt::c_api::create_session(model, options, out);
  });
}

void seqrt_session_release(seqrt_session* session) { delete session; }

seqrt_status seqrt_session_run(const seqrt_session* session,
                               const char* const* input_names,
                               const seqrt_tensor* const* inputs,
                               size_t input_count,
                               const char* const* output_names,
                               seqrt_tensor** outputs, size_t output_count) {
  return guarded(__func__, [&] {
    return seqrt::c_api::run_session(session, input_names, inputs, input_count,
                                     output_names, outputs, output_count);
  });
}

seqrt_status seqrt_session_cancel(const seqrt_session* session) {
  return guarded(__func__, [&] {
    SEQRT_RETURN_IF_ERROR(require(session, "session"));
    session->session->cancel();
    return Status::ok();
  });
}

seqrt_status seqrt_session_backend_name(const seqrt_session* session,
                                        const char** out) {
  return guarded(__func__, [&] {
    SEQRT_RETURN_IF_ERROR(require(session, "session"));
    SEQRT_RETURN_IF_ERROR(require(out, "out"));
    *out = session->session->device_info().backend.c_str();
    return Status::ok();
  });
}

seqrt_status seqrt_session_device_name(const seqrt_session* session,
                                       const char** out) {
  return guarded(__func__, [&] {
    SEQRT_RETURN_IF_ERROR(require(session, "session"));
    SEQRT_RETURN_IF_ERROR(require(out, "out"));
    *out = session->session->device_info().name.c_str();
    return Status::ok();
  });
}

seqrt_status seqrt_session_memory_plan(const seqrt_session* session,
                                       const char* const* dim_names,
                                       const int64_t* dim_sizes,
                                       size_t dim_count,
                                       int64_t* peak_arena_bytes,
                                       int64_t* naive_bytes) {
  return guarded(__func__, [&] {
    return seqrt::c_api::memory_plan(session, dim_names, dim_sizes, dim_count,
                                     peak_arena_bytes, naive_bytes);
  });
}

}  // extern "C"
