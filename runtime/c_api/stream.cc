// seqrt_stream_* and seqrt_snapshot_*: one sequence's state kept inside the
// runtime between runs (runtime/stream.h).
#include "runtime/c_api/handles.h"

namespace seqrt::c_api {
namespace {

// The names a stream keeps as state instead of returning them.
std::vector<std::string> state_outputs(const Session& session) {
  std::vector<std::string> names;
  const Graph& graph = session.graph();
  for (const StatePair& pair : graph.state_pairs) {
    names.push_back(graph.value(pair.output).name);
  }
  return names;
}

// Prefill and step are the same run: the Stream feeds its state either way.
Status run_stream(seqrt_stream* stream, const char* const* input_names,
                  const seqrt_tensor* const* inputs, size_t input_count,
                  const char* const* output_names, seqrt_tensor** outputs,
                  size_t output_count) {
  SEQRT_RETURN_IF_ERROR(require(stream, "stream"));
  SEQRT_ASSIGN_OR_RETURN(auto feeds,
                         collect_feeds(input_names, inputs, input_count));
  if (output_count > 0) {
    SEQRT_RETURN_IF_ERROR(require(output_names, "output_names"));
    SEQRT_RETURN_IF_ERROR(require(outputs, "outputs"));
  }
  SEQRT_ASSIGN_OR_RETURN(auto results, stream->stream.run(feeds));
  return hand_out_outputs(std::move(results), output_names, outputs,
                          output_count, state_outputs(*stream->session));
}

}  // namespace
}  // namespace seqrt::c_api

using seqrt::Status;
using seqrt::c_api::guarded;
using seqrt::c_api::require;

extern "C" {

seqrt_status seqrt_stream_create(const seqrt_session* session,
                                 seqrt_stream** out) {
  return guarded(__func__, [&] {
    SEQRT_RETURN_IF_ERROR(require(session, "session"));
    SEQRT_RETURN_IF_ERROR(require(out, "out"));
    *out = new seqrt_stream(session->session);
    return Status::ok();
  });
}

void seqrt_stream_release(seqrt_stream* stream) { delete stream; }

seqrt_status seqrt_stream_prefill(seqrt_stream* stream,
                                  const char* const* input_names,
                                  const seqrt_tensor* const* inputs,
                                  size_t input_count,
                                  const char* const* output_names,
                                  seqrt_tensor** outputs, size_t output_count) {
  return guarded(__func__, [&] {
    return seqrt::c_api::run_stream(stream, input_names, inputs, input_count,
                                    output_names, outputs, output_count);
  });
}

seqrt_status seqrt_stream_step(seqrt_stream* stream,
                               const char* const* input_names,
                               const seqrt_tensor* const* inputs,
                               size_t input_count,
                               const char* const* output_names,
                               seqrt_tensor** outputs, size_t output_count) {
  return guarded(__func__, [&] {
    return seqrt::c_api::run_stream(stream, input_names, inputs, input_count,
                                    output_names, outputs, output_count);
  });
}

seqrt_status seqrt_stream_snapshot(const seqrt_stream* stream,
                                   seqrt_snapshot** out) {
  return guarded(__func__, [&] {
    SEQRT_RETURN_IF_ERROR(require(stream, "stream"));
    SEQRT_RETURN_IF_ERROR(require(out, "out"));
    auto handle = std::make_unique<seqrt_snapshot>();
    handle->state = stream->stream.snapshot();
    *out = handle.release();
    return Status::ok();
  });
}

seqrt_status seqrt_stream_restore(seqrt_stream* stream,
                                  const seqrt_snapshot* snapshot) {
  return guarded(__func__, [&] {
    SEQRT_RETURN_IF_ERROR(require(stream, "stream"));
    SEQRT_RETURN_IF_ERROR(require(snapshot, "snapshot"));
    return stream->stream.restore(snapshot->state);
  });
}

seqrt_status seqrt_stream_reset(seqrt_stream* stream) {
  return guarded(__func__, [&] {
    SEQRT_RETURN_IF_ERROR(require(stream, "stream"));
    stream->stream.reset();
    return Status::ok();
  });
}

void seqrt_snapshot_release(seqrt_snapshot* snapshot) { delete snapshot; }

}  // extern "C"
