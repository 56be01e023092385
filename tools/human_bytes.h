// Byte counts for people: "512 B", "1.5 KiB", "2.3 GiB" — the same text
// the limit errors use (graph/limits.h).
#pragma once

#include <cstdint>
#include <string>

#include "graph/limits.h"

namespace seqrt {

inline std::string human_bytes(int64_t bytes) { return format_bytes(bytes); }

}  // namespace seqrt
