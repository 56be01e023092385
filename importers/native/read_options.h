// Reader entry points with options, for tests, tools and other importers.
// The public functions in reader.h use the defaults.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "graph/graph.h"
#include "importers/native/reader.h"
#include "ops/registry.h"

namespace seqrt {

struct SeqrtReadOptions {
  // Names the input in error messages ("'<name>': ...").
  std::string source_name = "<memory buffer>";
  // Op schemas that nodes are checked against (check_ops). nullptr skips
  // that check: only for round-trip tests of graphs whose ops are not
  // registered; every other check still runs.
  const OpRegistry* registry = &OpRegistry::global();
  // Map the file, or read it into memory (read_seqrt_file only).
  FileAccess access = FileAccess::kMap;
};

Result<Graph> read_seqrt_buffer(std::shared_ptr<const void> owner,
                                const uint8_t* data, size_t size,
                                const SeqrtReadOptions& options);

// `options.source_name` is replaced by the path.
Result<Graph> read_seqrt_file(const std::string& path,
                              const SeqrtReadOptions& options);

}  // namespace seqrt
