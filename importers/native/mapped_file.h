// A file mapped read-only into memory; unmapped when the last shared_ptr
// to it goes away. Tensor views into the mapping hold such a pointer.
//
// A mapping reads the file's pages lazily: if the file is truncated while
// mapped, touching a page past the new end raises SIGBUS. Every live
// mapping is therefore listed in a small registry that a SIGBUS handler
// may read (find_mapped_file): the CLI turns such a fault into "model file
// 'PATH' changed or was truncated while in use" (tools/sigbus_handler.h).
// Callers that cannot promise the file stays unchanged read it into memory
// instead (FileAccess::kCopy, importers/native/reader.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "graph/status.h"

namespace seqrt {

class MappedFile {
 public:
  // Maps the whole regular file at `path`. An empty file gives size() 0
  // and data() nullptr.
  static Result<std::shared_ptr<const MappedFile>> open(
      const std::string& path);

  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  // Page-aligned start of the mapping.
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  MappedFile(const uint8_t* data, size_t size, int slot)
      : data_(data), size_(size), slot_(slot) {}

  const uint8_t* data_;
  size_t size_;
  int slot_;  // index in the registry, -1 when not listed
};

// The path of the live mapping holding `address` (its first
// kMaxMappedPathBytes - 1 bytes, NUL-terminated), or nullptr. Safe to call
// from a signal handler: it only reads atomics and fixed arrays.
// Mappings beyond kMaxListedMappings alive at once are not listed.
inline constexpr int kMaxListedMappings = 64;
inline constexpr size_t kMaxMappedPathBytes = 1024;
const char* find_mapped_file(const void* address);

}  // namespace seqrt
