// Byte counts for people: "512 B", "1.5 KiB", "2.3 GiB".
#pragma once

#include <cstdint>
#include <iterator>
#include <string>

#include <fmt/format.h>

namespace seqrt {

inline std::string human_bytes(int64_t bytes) {
  constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  while (value >= 1024 && unit + 1 < std::size(kUnits)) {
    value /= 1024;
    ++unit;
  }
  return unit == 0 ? fmt::format("{} B", bytes)
                   : fmt::format("{:.1f} {}", value, kUnits[unit]);
}

}  // namespace seqrt
