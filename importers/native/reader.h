// Reads .seqrt files (layout in schema/README.md). The file is untrusted:
// it is fully validated (header, FlatBuffers verifier, every offset, size,
// dtype and value index, then verify_graph() and the op schemas) before a
// Graph is returned; a bad file gives an error naming the file, never a
// crash.
//
//   SEQRT_ASSIGN_OR_RETURN(Graph graph, read_seqrt_file("model.seqrt"));
//
// Constants, tensor attributes and initial states are read-only
// Tensor::view()s into the file's bytes (zero copy); they keep the mapping
// or buffer alive.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "graph/graph.h"
#include "graph/status.h"

namespace seqrt {

// The format version this reader reads and the writer writes. A reader
// accepts any file of its major version (older or newer minor); another
// major version is refused.
inline constexpr uint32_t kSeqrtFormatMajor = 1, kSeqrtFormatMinor = 2;

// How read_seqrt_file reaches the file's bytes.
enum class FileAccess {
  // Map the file read-only; weights are views into the mapping (nothing is
  // copied). The file must not be truncated or rewritten in place while
  // graphs read from it are alive: a page that is gone faults with SIGBUS
  // (write_seqrt_file() replaces files by renaming, which is safe).
  kMap,
  // Read the whole file into memory once; the file may change or go away
  // as soon as the read returns. Costs the file's size in memory.
  kCopy,
};

// Maps the file read-only (FileAccess::kMap).
Result<Graph> read_seqrt_file(const std::string& path);
Result<Graph> read_seqrt_file(const std::string& path, FileAccess access);

// Same validation over bytes in memory that `owner` keeps alive. Tensors
// are views into `data` when it is 64-byte aligned; otherwise the bytes are
// first copied once into aligned memory (weights must be aligned).
Result<Graph> read_seqrt_buffer(std::shared_ptr<const void> owner,
                                const uint8_t* data, size_t size);

// True when `data` starts with the .seqrt magic (checks nothing else).
bool looks_like_seqrt(const uint8_t* data, size_t size);

}  // namespace seqrt
