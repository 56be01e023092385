// The checked-in list of node tests expected to fail on one backend
// (expected_failures_<backend>.txt). One entry a line:
//   test_acos  # op Acos is not in DESIGN.md §7
// Blank lines and lines starting with '#' are comments. Every entry must
// give a reason, so that the list says why each test fails.
#pragma once

#include <map>
#include <string>

#include "graph/status.h"

namespace seqrt::onnx_node {

// Test name -> reason.
using ExpectedFailures = std::map<std::string, std::string>;

// Parses the list text; `file_name` names it in errors. An entry without a
// reason, a name with spaces or a duplicate is an error naming the line.
Result<ExpectedFailures> parse_expected_failures(const std::string& text,
                                                 const std::string& file_name);

// Reads and parses a list file. A missing file is an empty list: a backend
// without a list is expected to pass every test.
Result<ExpectedFailures> read_expected_failures(const std::string& path);

// "test_acos  # op Acos is not in DESIGN.md §7"
std::string format_expected_failure(const std::string& test_name,
                                    const std::string& reason);

}  // namespace seqrt::onnx_node
