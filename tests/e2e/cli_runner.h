// Runs the `seqrt` and `make_tiny_mlp` binaries (paths compiled in by
// tests/e2e/CMakeLists.txt) and captures what they print.
#pragma once

#include <string>
#include <vector>

#include "graph/tensor.h"

namespace seqrt::e2e {

struct CommandResult {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs `program` with `args` and waits for it.
CommandResult run_program(const std::string& program,
                          const std::vector<std::string>& args);
// Runs the seqrt CLI.
CommandResult run_seqrt(const std::vector<std::string>& args);

// A fresh directory for this test process, holding the tiny MLP sample
// (tiny_mlp.seqrt, tokens.npy) written by make_tiny_mlp.
const std::string& sample_dir();

std::string read_text(const std::string& path);
void write_bytes(const std::string& path, const std::string& bytes);

}  // namespace seqrt::e2e
