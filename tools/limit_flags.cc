#include "tools/limit_flags.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace seqrt {
namespace {

struct FlagInfo {
  LimitKind kind;
  const char* help;
};

const std::vector<FlagInfo>& flag_infos() {
  static const std::vector<FlagInfo> infos = {
      {LimitKind::kMaxTensorBytes,
       "Largest tensor allowed, in bytes (suffix K, M, G, T; default 16G)"},
      {LimitKind::kMaxTensorElements,
       "Most elements in one tensor (default 2^34)"},
      {LimitKind::kMaxNodes,
       "Most nodes in the graph, subgraphs included (default 1000000)"},
      {LimitKind::kMaxSubgraphDepth,
       "Deepest subgraph nesting (default 16, at most 64)"},
      {LimitKind::kMemoryBudgetBytes,
       "Bytes one run may hold (arena, weights, inputs, outputs, and what "
       "it allocates for shapes computed at run time), e.g. 2G; compiling "
       "or running above it fails (default: no budget)"},
      {LimitKind::kMaxLoopIterations,
       "Most iterations of one Loop node in one run (default 2^31)"},
      {LimitKind::kRunTimeoutMs,
       "Seconds one run may take (decimals allowed, e.g. 2 or 0.5); past "
       "it the run stops with an error (default: none)"},
  };
  return infos;
}

bool is_byte_limit(LimitKind kind) {
  return kind == LimitKind::kMaxTensorBytes ||
         kind == LimitKind::kMemoryBudgetBytes;
}

// "2", "0.5" seconds -> milliseconds (at least 1: 0 means no deadline).
Result<int64_t> parse_seconds(const std::string& text) {
  char* end = nullptr;
  const double seconds = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !std::isfinite(seconds) ||
      !(seconds > 0) || seconds > 1e9) {
    return invalid_argument("'{}' is not a number of seconds > 0", text);
  }
  return std::max<int64_t>(1,
                           static_cast<int64_t>(std::llround(seconds * 1000)));
}

Result<int64_t> parse_count(const std::string& text) {
  char* end = nullptr;
  errno = 0;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || errno != 0 || *end != '\0') {
    return invalid_argument("'{}' is not a whole number", text);
  }
  return static_cast<int64_t>(value);
}

}  // namespace

Result<int64_t> parse_byte_size(const std::string& text) {
  size_t number_end = 0;
  while (number_end < text.size() &&
         (std::isdigit(static_cast<unsigned char>(text[number_end])) ||
          text[number_end] == '.')) {
    ++number_end;
  }
  const std::string number = text.substr(0, number_end);
  std::string unit = text.substr(number_end);
  if (!unit.empty() && (unit.back() == 'B' || unit.back() == 'b')) {
    unit.pop_back();
  }
  if (unit.size() == 2 && unit[1] == 'i') unit.pop_back();
  int shift = -1;
  if (unit.empty()) shift = 0;
  if (unit.size() == 1) {
    const char u = static_cast<char>(std::toupper(unit[0]));
    shift = u == 'K' ? 10 : u == 'M' ? 20 : u == 'G' ? 30 : u == 'T' ? 40 : -1;
  }
  char* end = nullptr;
  const double value = std::strtod(number.c_str(), &end);
  if (number.empty() || *end != '\0' || shift < 0 || !std::isfinite(value)) {
    return invalid_argument(
        "'{}' is not a byte size; expected a number with an optional K, M, "
        "G or T suffix (4G, 512MiB)",
        text);
  }
  const double bytes = std::ldexp(value, shift);
  if (bytes >= 9.2e18) {
    return invalid_argument("byte size '{}' is too large", text);
  }
  return static_cast<int64_t>(bytes);
}

void add_limit_flags(CLI::App& command, LimitFlags& flags) {
  for (const FlagInfo& info : flag_infos()) {
    const LimitKind kind = info.kind;
    command
        .add_option_function<std::string>(
            limit_flag(kind),
            [&flags, kind](const std::string& value) { flags[kind] = value; },
            info.help)
        ->group("Limits");
  }
}

Status apply_limit_flags(const LimitFlags& flags, Limits& limits) {
  for (const auto& [kind, text] : flags) {
    Result<int64_t> value = is_byte_limit(kind) ? parse_byte_size(text)
                            : kind == LimitKind::kRunTimeoutMs
                                ? parse_seconds(text)
                                : parse_count(text);
    Status status =
        value.is_ok() ? set_limit(limits, kind, value.value()) : value.status();
    if (!status.is_ok()) return status.with_context(limit_flag(kind));
  }
  return Status::ok();
}

}  // namespace seqrt
