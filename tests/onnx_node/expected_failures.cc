#include "tests/onnx_node/expected_failures.h"

#include <fstream>
#include <sstream>

#include <fmt/format.h>

namespace seqrt::onnx_node {
namespace {

std::string trim(const std::string& text) {
  const char* kSpace = " \t\r";
  const size_t begin = text.find_first_not_of(kSpace);
  if (begin == std::string::npos) return "";
  const size_t end = text.find_last_not_of(kSpace);
  return text.substr(begin, end - begin + 1);
}

}  // namespace

Result<ExpectedFailures> parse_expected_failures(const std::string& text,
                                                 const std::string& file_name) {
  ExpectedFailures entries;
  std::istringstream lines(text);
  std::string line;
  int line_number = 0;
  while (std::getline(lines, line)) {
    ++line_number;
    const std::string stripped = trim(line);
    if (stripped.empty() || stripped[0] == '#') continue;
    const size_t hash = stripped.find('#');
    const std::string name =
        trim(hash == std::string::npos ? stripped : stripped.substr(0, hash));
    const std::string reason =
        hash == std::string::npos ? "" : trim(stripped.substr(hash + 1));
    if (reason.empty()) {
      return invalid_argument(
          "{}:{}: entry '{}' has no reason; expected 'test_name  # reason'",
          file_name, line_number, name);
    }
    if (name.find_first_of(" \t") != std::string::npos) {
      return invalid_argument(
          "{}:{}: '{}' is not one test name; expected 'test_name  # reason'",
          file_name, line_number, name);
    }
    if (!entries.emplace(name, reason).second) {
      return invalid_argument("{}:{}: test '{}' is listed twice", file_name,
                              line_number, name);
    }
  }
  return entries;
}

Result<ExpectedFailures> read_expected_failures(const std::string& path) {
  std::ifstream file(path);
  if (!file) return ExpectedFailures{};
  std::ostringstream text;
  text << file.rdbuf();
  if (file.bad())
    return io_error("cannot read expected-failure list '{}'", path);
  return parse_expected_failures(text.str(), path);
}

std::string format_expected_failure(const std::string& test_name,
                                    const std::string& reason) {
  return fmt::format("{}  # {}", test_name, reason);
}

}  // namespace seqrt::onnx_node
