#include "tests/e2e/cli_runner.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

namespace seqrt::e2e {
namespace {

std::string shell_quote(const std::string& arg) {
  std::string quoted = "'";
  for (char c : arg)
    quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string scratch_dir() {
  static const std::string dir = [] {
    std::string path = ::testing::TempDir() + "seqrt_e2e_" +
                       std::to_string(static_cast<long>(getpid()));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
    return path;
  }();
  return dir;
}

// Removes the scratch directory after the last test of the process.
class ScratchCleanup : public ::testing::Environment {
 public:
  void TearDown() override {
    std::error_code ignored;
    std::filesystem::remove_all(scratch_dir(), ignored);
  }
};
// Registered before main() runs the tests, as GoogleTest allows.
::testing::Environment* const cleanup =
    ::testing::AddGlobalTestEnvironment(new ScratchCleanup);

}  // namespace

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

CommandResult run_program(const std::string& program,
                          const std::vector<std::string>& args) {
  std::string out_path = scratch_dir() + "/stdout.txt";
  std::string err_path = scratch_dir() + "/stderr.txt";
  std::string command = shell_quote(program);
  for (const std::string& arg : args) command += " " + shell_quote(arg);
  command += " >" + shell_quote(out_path) + " 2>" + shell_quote(err_path);
  int status = std::system(command.c_str());
  CommandResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.out = read_text(out_path);
  result.err = read_text(err_path);
  return result;
}

CommandResult run_seqrt(const std::vector<std::string>& args) {
  return run_program(SEQRT_CLI_PATH, args);
}

const std::string& sample_dir() {
  static const std::string dir = [] {
    std::string path = scratch_dir() + "/sample";
    CommandResult made = run_program(SEQRT_MAKE_TINY_MLP_PATH, {path});
    EXPECT_EQ(made.exit_code, 0) << made.err;
    return path;
  }();
  return dir;
}

}  // namespace seqrt::e2e
