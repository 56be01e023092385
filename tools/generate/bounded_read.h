// Reading a small text file whole (a prompt, a tokenizer's JSON) with a
// bound that holds even if the file grows while it is read.
#pragma once

#include <cstdint>
#include <string>

#include "graph/regular_file.h"
#include "graph/status.h"

namespace seqrt {

// The bytes of `file` (opened from `path`), reading at most `max_bytes` + 1
// of them: a result longer than `max_bytes` means the file is larger, for
// the caller to report as it sees fit. Errors name `path`.
Result<std::string> read_bounded(RegularFile file, const std::string& path,
                                 uint64_t max_bytes);

}  // namespace seqrt
