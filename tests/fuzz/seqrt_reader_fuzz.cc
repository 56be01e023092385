// libFuzzer target for the .seqrt reader and its validation: any input must
// give a graph or a clean error, never a crash or an out-of-bounds read.
#include <cstddef>
#include <cstdint>

#include "importers/native/read_options.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Both with the op schemas (the public reader's path) and without them,
  // so inputs that name unknown ops still reach the later checks.
  seqrt::SeqrtReadOptions options;
  seqrt::Result<seqrt::Graph> graph =
      seqrt::read_seqrt_buffer(nullptr, data, size, options);
  options.registry = nullptr;
  graph = seqrt::read_seqrt_buffer(nullptr, data, size, options);
  if (graph.is_ok()) {
    // Touch every constant's bytes so ASan catches a bad view.
    volatile uint8_t sink = 0;
    for (const auto& [id, tensor] : graph->constants) {
      const auto* bytes = static_cast<const uint8_t*>(tensor.data());
      for (size_t i = 0; i < tensor.byte_size(); ++i) sink ^= bytes[i];
    }
    (void)sink;
  }
  return 0;
}
