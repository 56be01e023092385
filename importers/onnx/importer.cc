#include "importers/onnx/importer.h"

#include <fmt/ranges.h>

#include "compiler/infer/infer_graph.h"
#include "graph/verifier.h"
#include "importers/onnx/graph_convert.h"
#include "importers/onnx/op_table.h"
#include "importers/onnx/opset_upgrade.h"
#include "importers/onnx/optional_fold.h"
#include "importers/onnx/proto_io.h"
#include "importers/onnx/state_pairs.h"

namespace seqrt {
namespace {

Result<std::map<std::string, int>> read_opsets(const onnx::ModelProto& model,
                                               const std::string& source) {
  std::map<std::string, int> opsets;
  for (const auto& entry : model.opset_import()) {
    opsets[normalize_domain(entry.domain())] =
        static_cast<int>(entry.version());
  }
  auto onnx = opsets.find(kOnnxDomain);
  if (onnx != opsets.end() &&
      (onnx->second < kMinOnnxOpset || onnx->second > kMaxOnnxOpset)) {
    return unsupported(
        "{} uses ONNX opset {}; seqrt imports opsets {} to {} ({} to {} "
        "through the ONNX version converter)",
        source, onnx->second, kOldestConvertedOpset, kMaxOnnxOpset,
        kOldestConvertedOpset, kMinOnnxOpset - 1);
  }
  return opsets;
}

FunctionTable read_functions(const onnx::ModelProto& model) {
  FunctionTable functions;
  for (const onnx::FunctionProto& function : model.functions()) {
    functions[{normalize_domain(function.domain()), function.name()}] =
        &function;
  }
  return functions;
}

Status unsupported_ops_error(const ImportContext& ctx) {
  // One line: the CLI prints errors as exactly one line.
  return unsupported("{} has {} node(s) with ops seqrt cannot import: {}",
                     ctx.source, ctx.unsupported.size(),
                     fmt::join(ctx.unsupported, "; "));
}

// `model` is ours to consume: its weights are freed as they are converted.
Result<Graph> import_model(onnx::ModelProto& model, const std::string& source,
                           const std::string& model_dir,
                           const ProgressFn& progress) {
  if (!model.has_graph()) return invalid_model("{} has no graph", source);
  ImportContext ctx;
  ctx.source = source;
  ctx.model_dir = model_dir;
  SEQRT_RETURN_IF_ERROR(upgrade_old_opset(model, source));
  SEQRT_ASSIGN_OR_RETURN(ctx.opsets, read_opsets(model, source));
  // Our graphs hold tensors: optionals are resolved before converting.
  SEQRT_RETURN_IF_ERROR(fold_optionals(*model.mutable_graph(), source));
  FunctionTable functions = read_functions(model);
  ctx.functions = &functions;
  ctx.registry = &OpRegistry::global();
  ctx.releasable_graph = model.mutable_graph();
  ctx.progress = progress;

  SEQRT_ASSIGN_OR_RETURN(Graph graph,
                         convert_graph(model.graph(), ctx, nullptr));
  if (!ctx.unsupported.empty()) return unsupported_ops_error(ctx);
  for (const auto& prop : model.metadata_props()) {
    graph.metadata[prop.key()] = prop.value();
  }
  report_progress(progress, "checking types");
  SEQRT_RETURN_IF_ERROR(verify_graph(graph).with_context(source));
  SEQRT_RETURN_IF_ERROR(infer_graph(graph).with_context(source));
  SEQRT_RETURN_IF_ERROR(detect_state_pairs(graph).with_context(source));
  SEQRT_RETURN_IF_ERROR(verify_graph(graph).with_context(source));
  return graph;
}

std::string parent_dir(const std::string& path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace

Result<Graph> import_onnx_file(const std::string& path,
                               const ProgressFn& progress) {
  onnx::ModelProto model;
  report_progress(progress, "parsing");
  std::string source = fmt::format("model '{}'", path);
  // Parsed from the file as a stream: the bytes are never held beside the
  // parsed message.
  SEQRT_RETURN_IF_ERROR(parse_proto_file(path, model, source));
  return import_model(model, source, parent_dir(path), progress);
}

Result<Graph> import_onnx_buffer(const uint8_t* data, size_t size,
                                 const std::string& model_dir) {
  onnx::ModelProto model;
  std::string source = "ONNX model buffer";
  SEQRT_RETURN_IF_ERROR(parse_proto(data, size, model, source));
  return import_model(model, source, model_dir, {});
}

}  // namespace seqrt
