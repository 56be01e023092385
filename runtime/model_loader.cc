#include "runtime/model_loader.h"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include <unistd.h>

#include "compiler/infer/infer_graph.h"
#include "graph/regular_file.h"
#include "importers/native/reader.h"
#include "importers/onnx/importer.h"

namespace seqrt {
namespace {

// Enough bytes for every format's magic.
constexpr size_t kProbeBytes = 16;

std::string lower_extension(const std::string& path) {
  size_t slash = path.find_last_of('/');
  size_t dot = path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) {
    return "";
  }
  std::string extension = path.substr(dot);
  for (char& c : extension) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return extension;
}

}  // namespace

Result<ModelFormat> detect_model_format(const std::string& path) {
  SEQRT_ASSIGN_OR_RETURN(RegularFile model, RegularFile::open(path));
  uint8_t head[kProbeBytes] = {};
  ssize_t read_bytes = ::read(model.fd(), head, sizeof(head));
  size_t got = read_bytes > 0 ? static_cast<size_t>(read_bytes) : 0;
  if (looks_like_seqrt(head, got)) return ModelFormat::kSeqrt;

  std::string extension = lower_extension(path);
  // A .seqrt file without the magic is damaged: the native reader says how.
  if (extension == ".seqrt") return ModelFormat::kSeqrt;
  // Any other file is tried as ONNX: its protobuf has no magic, and the
  // importer names the file when the bytes do not parse.
  return ModelFormat::kOnnx;
}

Result<Graph> load_model(const std::string& path, const ProgressFn& progress,
                         FileAccess access) {
  SEQRT_ASSIGN_OR_RETURN(ModelFormat format, detect_model_format(path));
  // The ONNX importer verifies and infers types itself.
  if (format == ModelFormat::kOnnx) return import_onnx_file(path, progress);
  report_progress(progress, "reading");
  SEQRT_ASSIGN_OR_RETURN(Graph graph, read_seqrt_file(path, access));
  report_progress(progress, "checking types");
  Status inferred = infer_graph(graph);
  if (!inferred.is_ok())
    return inferred.with_context(fmt::format("'{}'", path));
  return graph;
}

}  // namespace seqrt
