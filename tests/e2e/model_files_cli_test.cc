// Model files through the CLI: a mapped model truncated under a running
// command ends it with a one-line error and exit code 1 (not SIGBUS), and
// --no-mmap lets the command finish; ONNX subgraphs nested up to
// --max-subgraph-depth 64 load and run, deeper ones get a depth error.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "importers/onnx/onnx_test_util.h"
#include "importers/tensor/npy.h"
#include "tests/e2e/cli_runner.h"

namespace seqrt::e2e {
namespace {

using Clock = std::chrono::steady_clock;
constexpr const char* kPrompt = "It is a truth";

// A seqrt command running in the background, its output in files.
class Background {
 public:
  Background(const std::vector<std::string>& args, const std::string& out,
             const std::string& err)
      : out_(out), err_(err) {
    pid_ = fork();
    if (pid_ == 0) {
      int out_fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      int err_fd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      dup2(out_fd, STDOUT_FILENO);
      dup2(err_fd, STDERR_FILENO);
      std::vector<char*> argv = {const_cast<char*>(SEQRT_CLI_PATH)};
      for (const std::string& arg : args) {
        argv.push_back(const_cast<char*>(arg.c_str()));
      }
      argv.push_back(nullptr);
      execv(SEQRT_CLI_PATH, argv.data());
      _exit(127);
    }
  }
  ~Background() {
    if (pid_ > 0 && !done_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }

  // Waits until stdout holds more than `bytes` bytes; false on timeout or
  // if the command ended first.
  bool wait_for_output(size_t bytes, std::chrono::seconds timeout) {
    Clock::time_point end = Clock::now() + timeout;
    while (Clock::now() < end) {
      std::error_code error;  // the child may not have created it yet
      uintmax_t size = std::filesystem::file_size(out_, error);
      if (!error && size > bytes) return true;
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        done_ = true;
        status_ = status;
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }

  // The wait status, or -1 after `timeout` (the command is then killed).
  int wait(std::chrono::seconds timeout) {
    Clock::time_point end = Clock::now() + timeout;
    while (!done_ && Clock::now() < end) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        done_ = true;
        status_ = status;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return done_ ? status_ : -1;
  }

  std::string out() const { return read_text(out_); }
  std::string err() const { return read_text(err_); }

 private:
  std::string out_, err_;
  pid_t pid_ = -1;
  bool done_ = false;
  int status_ = -1;
};

std::string demo_copy(const std::string& name) {
  std::string path = sample_dir() + "/" + name;
  std::filesystem::copy_file(SEQRT_DEMO_MODEL, path,
                             std::filesystem::copy_options::overwrite_existing);
  return path;
}

// Starts `generate` on a copy of the demo model, truncates the copy to
// `size` bytes once text is streaming, and returns the ended command.
void generate_and_truncate(Background& command, const std::string& copy,
                           off_t size) {
  ASSERT_TRUE(command.wait_for_output(std::string(kPrompt).size() + 1,
                                      std::chrono::seconds(120)))
      << command.err();
  ASSERT_EQ(::truncate(copy.c_str(), size), 0);
}

TEST(cli_model_files, TruncatingAMappedModelIsAOneLineError) {
  for (off_t size : {off_t{0}, off_t{4096}}) {
    SCOPED_TRACE(size);
    std::string name = "truncated_to_" + std::to_string(size);
    std::string copy = demo_copy(name + ".seqrt");
    std::string base = sample_dir() + "/" + name;
    Background command({"generate", copy, "--prompt", kPrompt, "--backend",
                        "cpu", "--max-tokens", "1000000"},
                       base + ".out", base + ".err");
    generate_and_truncate(command, copy, size);
    int status = command.wait(std::chrono::seconds(60));
    ASSERT_NE(status, -1) << "still running after the truncation";
    ASSERT_TRUE(WIFEXITED(status))
        << "killed by signal " << WTERMSIG(status) << ": " << command.err();
    EXPECT_EQ(WEXITSTATUS(status), 1);
    std::string err = command.err();
    EXPECT_EQ(err.rfind("seqrt: error: model file '" + copy +
                            "' changed or was truncated while in use",
                        0),
              0u)
        << err;
    EXPECT_NE(err.find("--no-mmap"), std::string::npos) << err;
    EXPECT_EQ(err.find('\n'), err.size() - 1) << err;
  }
}

TEST(cli_model_files, WithNoMmapTheRunFinishes) {
  std::string copy = demo_copy("truncated_no_mmap.seqrt");
  std::string base = sample_dir() + "/truncated_no_mmap";
  Background command({"generate", copy, "--prompt", kPrompt, "--backend", "cpu",
                      "--max-tokens", "20", "--no-mmap"},
                     base + ".out", base + ".err");
  generate_and_truncate(command, copy, 0);
  int status = command.wait(std::chrono::seconds(300));
  ASSERT_NE(status, -1);
  ASSERT_TRUE(WIFEXITED(status)) << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0) << command.err();
  EXPECT_NE(command.out().find("decode: 19 tokens"), std::string::npos)
      << command.out();
}

TEST(cli_model_files, EveryModelCommandTakesNoMmap) {
  std::string model = sample_dir() + "/tiny_mlp.seqrt";
  std::string tokens = "tokens=" + sample_dir() + "/tokens.npy";
  EXPECT_EQ(run_seqrt({"inspect", model, "--no-mmap"}).exit_code, 0);
  EXPECT_EQ(run_seqrt({"run", model, "-i", tokens, "--no-mmap"}).exit_code, 0);
  EXPECT_EQ(run_seqrt({"bench", model, "--input", tokens, "--runs", "1",
                       "--warmup", "0", "--no-mmap"})
                .exit_code,
            0);
  CommandResult convert = run_seqrt(
      {"convert", model, sample_dir() + "/no_mmap_copy.seqrt", "--no-mmap"});
  EXPECT_EQ(convert.exit_code, 0) << convert.err;
  CommandResult generate = run_seqrt({"generate", SEQRT_DEMO_MODEL, "--prompt",
                                      "It", "--no-mmap", "--max-tokens", "2"});
  EXPECT_EQ(generate.exit_code, 0) << generate.err;
}

// cond and x for onnx_test::nested_if_model.
std::vector<std::string> nested_if_inputs(const std::string& dir) {
  EXPECT_TRUE(
      write_npy_file(Tensor::scalar<bool>(true), dir + "/cond.npy").is_ok());
  EXPECT_TRUE(
      write_npy_file(Tensor::from_vector<float>({2}, {3, -4}), dir + "/x.npy")
          .is_ok());
  return {"-i", "cond=" + dir + "/cond.npy", "-i", "x=" + dir + "/x.npy"};
}

CommandResult run_nested(int depth, const std::vector<std::string>& extra) {
  std::string dir = sample_dir();
  std::string model = dir + "/nested_if_" + std::to_string(depth) + ".onnx";
  write_bytes(model, onnx_test::serialize(onnx_test::nested_if_model(depth)));
  std::vector<std::string> args = {"run", model, "--backend", "reference"};
  for (const std::string& arg : nested_if_inputs(dir)) args.push_back(arg);
  args.insert(args.end(), extra.begin(), extra.end());
  return run_seqrt(args);
}

TEST(cli_model_files, SixtyNestedIfsRunWithMaxSubgraphDepth64) {
  CommandResult result = run_nested(60, {"--max-subgraph-depth", "64"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("y"), std::string::npos) << result.out;
  CommandResult refused = run_nested(60, {});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("above max_subgraph_depth (16 subgraph "
                             "levels); raise it with --max-subgraph-depth"),
            std::string::npos)
      << refused.err;
}

TEST(cli_model_files, NestingPastTheLoadersBoundIsADepthError) {
  CommandResult result = run_nested(80, {"--max-subgraph-depth", "64"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find("nests subgraphs (If, Loop or Scan bodies) more "
                            "than 64 levels deep"),
            std::string::npos)
      << result.err;
  EXPECT_NE(result.err.find("--max-subgraph-depth"), std::string::npos);
  EXPECT_EQ(result.err.find("corrupt"), std::string::npos) << result.err;
}

}  // namespace
}  // namespace seqrt::e2e
