// The CLI's contract with scripts: exit code 0 on success; on failure a
// non-zero code and exactly one line "seqrt: error: <message>" on stderr.
#include <sys/stat.h>

#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "importers/tensor/npy.h"
#include "tests/e2e/cli_runner.h"

namespace seqrt::e2e {
namespace {

constexpr int kCommandFailed = 1;
constexpr int kUsageError = 2;

std::string model_path() { return sample_dir() + "/tiny_mlp.seqrt"; }
std::string tokens_input() { return "tokens=" + sample_dir() + "/tokens.npy"; }

// Checks the one-line error form and that the message mentions `part`.
void expect_error(const CommandResult& result, int exit_code,
                  const std::string& part) {
  SCOPED_TRACE(part);
  EXPECT_EQ(result.exit_code, exit_code) << result.err;
  EXPECT_EQ(result.err.rfind("seqrt: error: ", 0), 0u) << result.err;
  ASSERT_FALSE(result.err.empty());
  EXPECT_EQ(result.err.find('\n'), result.err.size() - 1) << result.err;
  EXPECT_NE(result.err.find(part), std::string::npos) << result.err;
}

TEST(cli, HelpAndVersionSucceedOnStdout) {
  CommandResult help = run_seqrt({"--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_TRUE(help.err.empty());
  for (const char* command : {"inspect", "run", "convert"}) {
    EXPECT_NE(help.out.find(command), std::string::npos) << help.out;
  }
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"inspect", "--help"},
        std::vector<std::string>{"run", "--help"},
        std::vector<std::string>{"convert", "--help"}}) {
    CommandResult sub = run_seqrt(args);
    EXPECT_EQ(sub.exit_code, 0) << args[0];
    EXPECT_TRUE(sub.err.empty());
    EXPECT_NE(sub.out.find(args[0]), std::string::npos) << sub.out;
  }
  EXPECT_NE(run_seqrt({"run", "--help"}).out.find("--output-dir"),
            std::string::npos);
  CommandResult version = run_seqrt({"--version"});
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_EQ(version.out, "seqrt " SEQRT_TEST_VERSION "\n");
}

TEST(cli, UsageErrorsAreOneLine) {
  expect_error(run_seqrt({}), kUsageError, "no command given");
  expect_error(run_seqrt({"frobnicate"}), kUsageError,
               "unknown command 'frobnicate'");
  expect_error(run_seqrt({"run", model_path(), "--frobnicate"}), kUsageError,
               "--frobnicate");
  expect_error(run_seqrt({"inspect"}), kUsageError, "FILE");
  expect_error(run_seqrt({"run", model_path(), "--repeat", "0"}), kUsageError,
               "--repeat: Value 0 not in range 1");
}

TEST(cli, MissingModelFile) {
  std::string missing = sample_dir() + "/missing.seqrt";
  expect_error(run_seqrt({"inspect", missing}), kCommandFailed, missing);
  expect_error(run_seqrt({"run", missing, "--input", tokens_input()}),
               kCommandFailed, missing);
  expect_error(run_seqrt({"convert", missing, sample_dir() + "/x.seqrt"}),
               kCommandFailed, missing);
}

TEST(cli, CorruptedModelFile) {
  std::string model = read_text(model_path());
  ASSERT_GT(model.size(), 256u);
  std::string truncated = sample_dir() + "/truncated.seqrt";
  write_bytes(truncated, model.substr(0, model.size() / 2));
  expect_error(run_seqrt({"inspect", truncated}), kCommandFailed, truncated);

  std::string garbled = sample_dir() + "/garbled.seqrt";
  std::string bytes = model;
  for (size_t i = 16; i < 128; ++i) bytes[i] = static_cast<char>(0xa5);
  write_bytes(garbled, bytes);
  expect_error(run_seqrt({"run", garbled, "--input", tokens_input()}),
               kCommandFailed, garbled);
}

TEST(cli, DamagedOnnxIsAnErrorNamingTheFile) {
  std::string onnx = sample_dir() + "/damaged.onnx";
  write_bytes(onnx, "\x08\x07\x3a\x7f");  // graph field cut short
  expect_error(run_seqrt({"inspect", onnx}), kCommandFailed,
               "model '" + onnx + "' is not a valid onnx.ModelProto");
  expect_error(run_seqrt({"convert", onnx, sample_dir() + "/x.seqrt"}),
               kCommandFailed, "truncated or corrupt");
}

TEST(cli, WrongInputName) {
  expect_error(run_seqrt({"run", model_path(), "--input",
                          "tokenz=" + sample_dir() + "/tokens.npy"}),
               kCommandFailed, "no input 'tokenz'; its inputs are: tokens");
  expect_error(run_seqrt({"run", model_path()}), kCommandFailed,
               "no tensor fed for input 'tokens'");
  expect_error(run_seqrt({"run", model_path(), "--input", "tokens"}),
               kCommandFailed, "NAME=PATH");
}

TEST(cli, WrongInputDTypeOrFile) {
  std::string floats = sample_dir() + "/float_tokens.npy";
  ASSERT_TRUE(write_npy_file(Tensor::from_vector<float>({1, 2}, {1, 2}), floats)
                  .is_ok());
  expect_error(run_seqrt({"run", model_path(), "--input", "tokens=" + floats}),
               kCommandFailed, "'tokens' must be i64, got f32");

  std::string garbage = sample_dir() + "/garbage.npy";
  write_bytes(garbage, "not a tensor");
  expect_error(run_seqrt({"run", model_path(), "--input", "tokens=" + garbage}),
               kCommandFailed, garbage);
  std::string missing_pb = sample_dir() + "/missing_tokens.pb";
  expect_error(
      run_seqrt({"run", model_path(), "--input", "tokens=" + missing_pb}),
      kCommandFailed, "cannot open '" + missing_pb + "'");
  expect_error(run_seqrt({"run", model_path(), "--input", "tokens=x.txt"}),
               kCommandFailed, "must be .npy or .pb");
}

// A FIFO as the model or an input is refused at once; opening it for
// reading would wait for a writer forever.
TEST(cli, AFifoIsRefusedNotWaitedOn) {
  const std::string fifo = sample_dir() + "/cli_errors_fifo.npy";
  std::remove(fifo.c_str());
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  expect_error(run_seqrt({"inspect", fifo}), kCommandFailed,
               "'" + fifo + "' is not a regular file");
  expect_error(run_seqrt({"run", model_path(), "--input", "tokens=" + fifo}),
               kCommandFailed, "'" + fifo + "' is not a regular file");
  std::remove(fifo.c_str());
}

TEST(cli, UnknownBackend) {
  expect_error(run_seqrt({"run", model_path(), "--input", tokens_input(),
                          "--backend", "warp-drive"}),
               kCommandFailed, "no backend 'warp-drive' in this build");
}

TEST(cli, ConvertWritesSeqrtOnly) {
  expect_error(run_seqrt({"convert", model_path(), sample_dir() + "/x.onnx"}),
               kCommandFailed, "convert writes .seqrt files only");
}

}  // namespace
}  // namespace seqrt::e2e
