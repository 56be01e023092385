// libFuzzer target for the graph compiler on imported graphs: bytes ->
// .seqrt reader or ONNX importer (told by the magic, as load_model does) ->
// type checking -> passes -> compile for the `reference` and `cpu`
// backends. Nothing runs. Graphs whose declared tensors exceed a small
// budget are skipped, so the fuzzer explores structure, not allocation.
#include <cstddef>
#include <cstdint>
#include <string>

#include "graph/dtype.h"
#include "graph/graph.h"
#include "importers/native/read_options.h"
#include "importers/native/reader.h"
#include "importers/onnx/importer.h"
#include "runtime/backend_registry.h"
#include "runtime/session.h"

namespace {

constexpr int64_t kBudgetBytes = int64_t{16} << 20;

// Sum of the byte sizes of every value of fixed shape, and false when a
// value of fixed shape alone or all of them together pass the budget.
bool within_budget(const seqrt::Graph& graph) {
  int64_t total = 0;
  for (const seqrt::Value& value : graph.values) {
    if (!value.shape || !value.shape->is_fixed()) continue;
    int64_t bytes = static_cast<int64_t>(seqrt::dtype_size(value.dtype) > 0
                                             ? seqrt::dtype_size(value.dtype)
                                             : 1);
    for (int64_t dim : value.shape->fixed_dims()) {
      if (dim != 0 && bytes > kBudgetBytes / dim) return false;
      bytes *= dim;
    }
    total += bytes;
    if (total > kBudgetBytes) return false;
  }
  return true;
}

seqrt::Result<seqrt::Graph> import(const uint8_t* data, size_t size) {
  if (seqrt::looks_like_seqrt(data, size)) {
    return seqrt::read_seqrt_buffer(nullptr, data, size, {});
  }
  return seqrt::import_onnx_buffer(data, size, /*model_dir=*/"");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  seqrt::Result<seqrt::Graph> graph = import(data, size);
  if (!graph.is_ok() || !within_budget(*graph)) return 0;
  for (const std::string& backend : seqrt::compiled_backends()) {
    if (backend != "reference" && backend != "cpu") continue;
    seqrt::SessionOptions options;
    options.backend = backend;
    (void)seqrt::Session::create(*graph, options);
  }
  return 0;
}
