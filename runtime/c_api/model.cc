// seqrt_model_*: loading a model (file or memory) into a type-checked graph,
// and reading what it declares: inputs, outputs, state pairs, metadata.
#include <cstring>

#include "compiler/infer/infer_graph.h"
#include "graph/run_control.h"
#include "importers/native/reader.h"
#include "importers/onnx/importer.h"
#include "runtime/c_api/handles.h"
#include "runtime/model_loader.h"

namespace seqrt::c_api {
namespace {

Status hand_out_model(Graph graph, seqrt_model** out) {
  auto handle = std::make_unique<seqrt_model>();
  handle->graph = std::move(graph);
  for (const auto& [key, value] : handle->graph.metadata) {
    handle->metadata_keys.push_back(key);
  }
  *out = handle.release();
  return Status::ok();
}

// The bytes are copied into owned, 64-byte aligned storage, so weights can
// be used in place and the caller may free its buffer at once.
Result<Graph> read_memory(const void* data, size_t size) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  if (!looks_like_seqrt(bytes, size)) {
    // Without a folder there is nowhere to find external data: refused.
    return import_onnx_buffer(bytes, size, "");
  }
  SEQRT_ASSIGN_OR_RETURN(
      Tensor copy, Tensor::allocate(DType::kU8, {static_cast<int64_t>(size)}));
  std::memcpy(copy.mutable_data(), data, size);
  const auto* aligned = static_cast<const uint8_t*>(copy.data());
  auto owner = std::make_shared<Tensor>(std::move(copy));
  SEQRT_ASSIGN_OR_RETURN(Graph graph, read_seqrt_buffer(owner, aligned, size));
  SEQRT_RETURN_IF_ERROR(infer_graph(graph));
  return graph;
}

Status check_model(const seqrt_model* model) { return require(model, "model"); }

// The value behind input or output `index`, or an error naming the range.
Result<const Value*> io_value(const seqrt_model* model, seqrt_io_kind kind,
                              size_t index) {
  SEQRT_RETURN_IF_ERROR(check_model(model));
  if (kind != SEQRT_IO_INPUT && kind != SEQRT_IO_OUTPUT) {
    return invalid_argument("unknown io kind {}", static_cast<int>(kind));
  }
  const Graph& graph = model->graph;
  const std::vector<ValueId>& ids =
      kind == SEQRT_IO_INPUT ? graph.inputs : graph.outputs;
  if (index >= ids.size()) {
    return invalid_argument("model '{}' has {} {}s; index {} is out of range",
                            graph.name, ids.size(),
                            kind == SEQRT_IO_INPUT ? "input" : "output", index);
  }
  return &graph.value(ids[index]);
}

Status io_dim(const seqrt_model* model, seqrt_io_kind kind, size_t index,
              size_t axis, int64_t* size, const char** symbol) {
  SEQRT_ASSIGN_OR_RETURN(const Value* value, io_value(model, kind, index));
  if (size == nullptr && symbol == nullptr) {
    return invalid_argument("size and symbol are both NULL");
  }
  if (!value->shape.has_value()) {
    return invalid_argument("'{}' has no known rank", value->name);
  }
  if (axis >= value->shape->rank()) {
    return invalid_argument("'{}' has rank {}; axis {} is out of range",
                            value->name, value->shape->rank(), axis);
  }
  const Dim& dim = (*value->shape)[axis];
  if (size != nullptr) *size = dim.is_fixed() ? dim.value() : -1;
  if (symbol != nullptr) {
    *symbol = dim.is_symbol() ? dim.symbol_name().c_str() : nullptr;
  }
  return Status::ok();
}

}  // namespace
}  // namespace seqrt::c_api

using seqrt::Status;
using seqrt::Value;
using seqrt::c_api::guarded;
using seqrt::c_api::io_value;
using seqrt::c_api::require;

extern "C" {

seqrt_status seqrt_model_load_file(const char* path, seqrt_model** out) {
  return guarded(__func__, [&] {
    SEQRT_RETURN_IF_ERROR(require(path, "path"));
    SEQRT_RETURN_IF_ERROR(require(out, "out"));
    // The default tensor limits hold for the weights the file declares
    // (a session's own limits are checked again when it is created).
    seqrt::RunControl control{seqrt::Limits()};
    seqrt::RunControl::Scope scope(&control);
    SEQRT_ASSIGN_OR_RETURN(seqrt::Graph graph, seqrt::load_model(path));
    return seqrt::c_api::hand_out_model(std::move(graph), out);
  });
}

seqrt_status seqrt_model_load_file_with_flags(const char* path, uint32_t flags,
                                              seqrt_model** out) {
  return guarded(__func__, [&]() -> Status {
    SEQRT_RETURN_IF_ERROR(require(path, "path"));
    SEQRT_RETURN_IF_ERROR(require(out, "out"));
    if ((flags & ~uint32_t{SEQRT_LOAD_COPY}) != 0) {
      return seqrt::invalid_argument(
          "unknown load flags 0x{:x}; known: SEQRT_LOAD_COPY (0x{:x})",
          flags & ~uint32_t{SEQRT_LOAD_COPY}, uint32_t{SEQRT_LOAD_COPY});
    }
    seqrt::FileAccess access = (flags & SEQRT_LOAD_COPY) != 0
                                   ? seqrt::FileAccess::kCopy
                                   : seqrt::FileAccess::kMap;
    SEQRT_ASSIGN_OR_RETURN(seqrt::Graph graph,
                           seqrt::load_model(path, {}, access));
    return seqrt::c_api::hand_out_model(std::move(graph), out);
  });
}

seqrt_status seqrt_model_load_memory(const void* data, size_t size,
                                     seqrt_model** out) {
  return guarded(__func__, [&]() -> Status {
    SEQRT_RETURN_IF_ERROR(require(data, "data"));
    SEQRT_RETURN_IF_ERROR(require(out, "out"));
    if (size == 0) return seqrt::invalid_argument("the model buffer is empty");
    seqrt::RunControl control{seqrt::Limits()};  // as seqrt_model_load_file
    seqrt::RunControl::Scope scope(&control);
    SEQRT_ASSIGN_OR_RETURN(seqrt::Graph graph,
                           seqrt::c_api::read_memory(data, size));
    return seqrt::c_api::hand_out_model(std::move(graph), out);
  });
}

void seqrt_model_release(seqrt_model* model) { delete model; }

seqrt_status seqrt_model_name(const seqrt_model* model, const char** out) {
  return guarded(__func__, [&] {
    SEQRT_RETURN_IF_ERROR(require(model, "model"));
    SEQRT_RETURN_IF_ERROR(require(out, "out"));
    *out = model->graph.name.c_str();
    return Status::ok();
  });
}

seqrt_status seqrt_model_io_count(const seqrt_model* model, seqrt_io_kind kind,
                                  size_t* out) {
  return guarded(__func__, [&]() -> Status {
    SEQRT_RETURN_IF_ERROR(require(model, "model"));
    SEQRT_RETURN_IF_ERROR(require(out, "out"));
    if (kind != SEQRT_IO_INPUT && kind != SEQRT_IO_OUTPUT) {
      return seqrt::invalid_argument("unknown io kind {}",
                                     static_cast<int>(kind));
    }
    *out = kind == SEQRT_IO_INPUT ? model->graph.inputs.size()
                                  : model->graph.outputs.size();
    return Status::ok();
  });
}

seqrt_status seqrt_model_io_name(const seqrt_model* model, seqrt_io_kind kind,
                                 size_t index, const char** out) {
  return guarded(__func__, [&] {
    SEQRT_RETURN_IF_ERROR(require(out, "out"));
    SEQRT_ASSIGN_OR_RETURN(const Value* value, io_value(model, kind, index));
    *out = value->name.c_str();
    return Status::ok();
  });
}

seqrt_status seqrt_model_io_dtype(const seqrt_model* model, seqrt_io_kind kind,
                                  size_t index, seqrt_dtype* out) {
  return guarded(__func__, [&] {
    SEQRT_RETURN_IF_ERROR(require(out, "out"));
    SEQRT_ASSIGN_OR_RETURN(const Value* value, io_value(model, kind, index));
    *out = static_cast<seqrt_dtype>(value->dtype);
    return Status::ok();
  });
}

seqrt_status seqrt_model_io_rank(const seqrt_model* model, seqrt_io_kind kind,
                                 size_t index, int64_t* out) {
  return guarded(__func__, [&] {
    SEQRT_RETURN_IF_ERROR(require(out, "out"));
    SEQRT_ASSIGN_OR_RETURN(const Value* value, io_value(model, kind, index));
    *out = value->shape.has_value() ? static_cast<int64_t>(value->shape->rank())
                                    : -1;
    return Status::ok();
  });
}

seqrt_status seqrt_model_io_dim(const seqrt_model* model, seqrt_io_kind kind,
                                size_t index, size_t axis, int64_t* size,
                                const char** symbol) {
  return guarded(__func__, [&] {
    return seqrt::c_api::io_dim(model, kind, index, axis, size, symbol);
  });
}

seqrt_status seqrt_model_state_pair_count(const seqrt_model* model,
                                          size_t* out) {
  return guarded(__func__, [&] {
    SEQRT_RETURN_IF_ERROR(require(model, "model"));
    SEQRT_RETURN_IF_ERROR(require(out, "out"));
    *out = model->graph.state_pairs.size();
    return Status::ok();
  });
}

seqrt_status seqrt_model_state_pair(const seqrt_model* model, size_t index,
                                    const char** input_name,
                                    const char** output_name) {
  return guarded(__func__, [&]() -> Status {
    SEQRT_RETURN_IF_ERROR(require(model, "model"));
    SEQRT_RETURN_IF_ERROR(require(input_name, "input_name"));
    SEQRT_RETURN_IF_ERROR(require(output_name, "output_name"));
    const seqrt::Graph& graph = model->graph;
    if (index >= graph.state_pairs.size()) {
      return seqrt::invalid_argument(
          "model '{}' has {} state pairs; index {} is out of range", graph.name,
          graph.state_pairs.size(), index);
    }
    const seqrt::StatePair& pair = graph.state_pairs[index];
    *input_name = graph.value(pair.input).name.c_str();
    *output_name = graph.value(pair.output).name.c_str();
    return Status::ok();
  });
}

seqrt_status seqrt_model_metadata(const seqrt_model* model, const char* key,
                                  const char** value) {
  return guarded(__func__, [&]() -> Status {
    SEQRT_RETURN_IF_ERROR(require(model, "model"));
    SEQRT_RETURN_IF_ERROR(require(key, "key"));
    SEQRT_RETURN_IF_ERROR(require(value, "value"));
    auto found = model->graph.metadata.find(key);
    if (found == model->graph.metadata.end()) {
      return seqrt::not_found("model '{}' has no metadata key '{}'",
                              model->graph.name, key);
    }
    *value = found->second.c_str();
    return Status::ok();
  });
}

seqrt_status seqrt_model_metadata_count(const seqrt_model* model, size_t* out) {
  return guarded(__func__, [&] {
    SEQRT_RETURN_IF_ERROR(require(model, "model"));
    SEQRT_RETURN_IF_ERROR(require(out, "out"));
    *out = model->metadata_keys.size();
    return Status::ok();
  });
}

seqrt_status seqrt_model_metadata_key(const seqrt_model* model, size_t index,
                                      const char** out) {
  return guarded(__func__, [&]() -> Status {
    SEQRT_RETURN_IF_ERROR(require(model, "model"));
    SEQRT_RETURN_IF_ERROR(require(out, "out"));
    if (index >= model->metadata_keys.size()) {
      return seqrt::invalid_argument(
          "model '{}' has {} metadata keys; index {} is out of range",
          model->graph.name, model->metadata_keys.size(), index);
    }
    *out = model->metadata_keys[index].c_str();
    return Status::ok();
  });
}

seqrt_status seqrt_model_op_count(const seqrt_model* model, size_t* out) {
  return guarded(__func__, [&] {
    SEQRT_RETURN_IF_ERROR(require(model, "model"));
    SEQRT_RETURN_IF_ERROR(require(out, "out"));
    *out = model->graph.nodes.size();
    return Status::ok();
  });
}

}  // extern "C"
