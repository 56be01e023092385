// --backend-option KEY=VALUE on the commands that open a backend: a key the
// backend takes is passed on, and a malformed flag, a key no backend takes
// or one the chosen backend refuses is a one-line error naming it.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/backend_registry.h"
#include "tests/e2e/cli_runner.h"

namespace seqrt::e2e {
namespace {

std::string model_path() { return sample_dir() + "/tiny_mlp.seqrt"; }
std::string tokens_input() { return "tokens=" + sample_dir() + "/tokens.npy"; }

void expect_error(const CommandResult& result, const std::string& part) {
  SCOPED_TRACE(part);
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_EQ(result.err.rfind("seqrt: error: ", 0), 0u) << result.err;
  EXPECT_NE(result.err.find(part), std::string::npos) << result.err;
}

TEST(cli_backend_options, RunPassesThemToTheBackend) {
  const std::vector<std::string> run = {"run",          model_path(), "-i",
                                        tokens_input(), "--backend",  "cpu"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = run;
    args.insert(args.end(), extra.begin(), extra.end());
    return run_seqrt(args);
  };
  EXPECT_EQ(with({"--backend-option", "device=0"}).exit_code, 0);
  expect_error(with({"--backend-option", "device=1"}),
               "backend 'cpu' has one device (index 0); device index 1");
  expect_error(with({"--backend-option", "device"}),
               "--backend-option 'device': expected KEY=VALUE");
  expect_error(with({"--backend-option", "device=first"}),
               "--backend-option 'device=first': backend option device must "
               "be a device index");
  expect_error(with({"--backend-option", "colour=blue"}),
               "no backend of this build takes option 'colour'");
  if (backend_option_specs("vulkan").empty()) return;
  // A key only Vulkan takes, given to the CPU backend.
  expect_error(with({"--backend-option", "forms=chunked"}),
               "cpu backend: no option 'forms'; it takes: device");
}

TEST(cli_backend_options, InspectBenchAndGenerateTakeTheFlag) {
  expect_error(run_seqrt({"inspect", model_path(), "--plan", "--bind",
                          "batch=1", "--bind", "seq=4", "--backend", "cpu",
                          "--backend-option", "device=2"}),
               "device index 2");
  // Without --backend there is no backend to take it.
  EXPECT_NE(run_seqrt({"inspect", model_path(), "--backend-option", "device=0"})
                .exit_code,
            0);
  expect_error(run_seqrt({"bench", model_path(), "--input", tokens_input(),
                          "--backend", "cpu", "--backend-option", "device=2"}),
               "device index 2");
  expect_error(run_seqrt({"generate", SEQRT_DEMO_MODEL, "--prompt", "a",
                          "--backend", "cpu", "--backend-option", "device=2"}),
               "device index 2");
}

}  // namespace
}  // namespace seqrt::e2e
