// A CLI11 check for integer flags: the text must be a whole number inside
// [min, max] of the flag's type. CLI11's own conversion wraps "-1" into a
// huge unsigned value and CLI::Range compares through double, so values
// past the type's range (99999999999999999999) could slip through; this
// parses with std::from_chars, which refuses both.
#pragma once

#include <charconv>
#include <string>
#include <system_error>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

namespace seqrt {

template <typename T>
CLI::Validator integer_in(T min, T max) {
  std::string range = fmt::format("[{}, {}]", min, max);
  return CLI::Validator(
      [min, max, range](std::string& text) -> std::string {
        T value{};
        const char* end = text.data() + text.size();
        auto [stop, error] = std::from_chars(text.data(), end, value);
        if (error != std::errc() || stop != end || value < min || value > max) {
          return fmt::format("'{}' is not a whole number in {}", text, range);
        }
        return "";
      },
      range, "integer_in");
}

}  // namespace seqrt
