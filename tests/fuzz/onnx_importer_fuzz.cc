// libFuzzer target for the ONNX importer: bytes -> ModelProto -> graph ->
// verifier -> shape inference. Every stage must end in a value or a clean
// error. External data is refused (no model folder), as for a buffer.
#include <cstddef>
#include <cstdint>

#include "compiler/infer/infer_graph.h"
#include "graph/verifier.h"
#include "importers/onnx/importer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  seqrt::Result<seqrt::Graph> graph =
      seqrt::import_onnx_buffer(data, size, /*model_dir=*/"");
  if (!graph.is_ok()) return 0;
  // The importer verifies and types its result already; run both again on
  // the graph it hands out, as the loader's callers do.
  if (!seqrt::verify_graph(*graph).is_ok()) return 0;
  (void)seqrt::infer_graph(*graph);
  return 0;
}
