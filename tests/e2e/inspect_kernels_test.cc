// `seqrt inspect FILE --plan --backend NAME`: the backend's kernel-level
// plan. On vulkan (lavapipe in CI) the tiny recurrent sample's Retention
// shows its tiling, the state's place and the shared bytes within the limit.
#include <regex>
#include <string>

#include <gtest/gtest.h>

#include "runtime/backend_registry.h"
#include "tests/device_skip.h"
#include "tests/e2e/cli_runner.h"

namespace seqrt::e2e {
namespace {

// The tiny recurrent sample (MatMul projections around a Retention),
// written beside the tiny MLP once.
const std::string& recurrent_model() {
  static const std::string path = [] {
    CommandResult made =
        run_program(SEQRT_MAKE_TINY_RECURRENT_PATH, {sample_dir()});
    EXPECT_EQ(made.exit_code, 0) << made.err;
    return sample_dir() + "/tiny_recurrent.seqrt";
  }();
  return path;
}

CommandResult inspect_kernels(const std::string& backend) {
  return run_seqrt({"inspect", recurrent_model(), "--plan", "--backend",
                    backend, "--bind", "seq=32"});
}

TEST(inspect_kernels, VulkanShowsTheRetentionTilingWithinTheLimit) {
  SEQRT_CREATE_BACKEND_OR_SKIP(vulkan, "vulkan");
  CommandResult result = inspect_kernels("vulkan");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::string& out = result.out;
  ASSERT_NE(out.find("kernel plan on vulkan"), std::string::npos) << out;
  std::smatch row;
  ASSERT_TRUE(std::regex_search(
      out, row,
      std::regex("\nretention +Retention +(registers|shared memory) +"
                 "([0-9.]+ [KM]?i?B) of ([0-9.]+ [KM]?i?B) +(\\S.*)")))
      << out;
  EXPECT_FALSE(row[4].str().empty());
}

TEST(inspect_kernels, ABackendWithoutAKernelPlanSaysSo) {
  CommandResult result = inspect_kernels("reference");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find("no kernel-level plan"), std::string::npos)
      << result.err;
}

TEST(inspect_kernels, BackendNeedsPlan) {
  CommandResult result =
      run_seqrt({"inspect", recurrent_model(), "--backend", "vulkan"});
  EXPECT_NE(result.exit_code, 0);
  EXPECT_NE(result.err.find("--plan"), std::string::npos) << result.err;
}

}  // namespace
}  // namespace seqrt::e2e
