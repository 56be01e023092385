// The flags that raise or lower the Session limits (graph/limits.h), shared
// by the commands that compile a model: --max-tensor-bytes,
// --max-tensor-elements, --max-nodes, --max-subgraph-depth,
// --memory-budget, --max-loop-iterations and --timeout (seconds a run may
// take). Byte sizes take a binary suffix: 512M, 4GiB, 1T.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include <CLI/CLI.hpp>

#include "graph/limits.h"
#include "graph/status.h"

namespace seqrt {

// The flags given, by limit, as typed.
using LimitFlags = std::map<LimitKind, std::string>;

// Adds the flags to `command`; what they get is written to `flags`,
// which must outlive the parse.
void add_limit_flags(CLI::App& command, LimitFlags& flags);

// Sets each given limit in `limits`; an error names the flag and the value.
Status apply_limit_flags(const LimitFlags& flags, Limits& limits);

// "4096", "512K", "4G", "4GiB", "1.5GiB" -> bytes.
Result<int64_t> parse_byte_size(const std::string& text);

}  // namespace seqrt
