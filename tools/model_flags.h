// --no-mmap, shared by every command that loads a model: read a .seqrt
// file into memory instead of mapping it, for files that may change while
// the command runs (a mapped file that is truncated faults; see
// tools/sigbus_handler.h).
#pragma once

#include <CLI/CLI.hpp>

#include "importers/native/reader.h"

namespace seqrt {

inline void add_no_mmap_flag(CLI::App& command, bool& no_mmap) {
  command.add_flag(
      "--no-mmap", no_mmap,
      "Read the model into memory instead of mapping it, so the file may be "
      "changed or removed while the command runs (costs the file's size in "
      "memory; ONNX files are always read)");
}

inline FileAccess file_access(bool no_mmap) {
  return no_mmap ? FileAccess::kCopy : FileAccess::kMap;
}

}  // namespace seqrt
