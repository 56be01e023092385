// `seqrt inspect FILE --passes` on the tiny MLP sample: the graph before and
// after the default passes and one statistics line per pass.
#include <string>

#include <gtest/gtest.h>

#include "compiler/passes/pass.h"
#include "tests/e2e/cli_runner.h"

namespace seqrt::e2e {
namespace {

TEST(inspect_passes, PrintsBothGraphsAndEveryPass) {
  CommandResult result =
      run_seqrt({"inspect", sample_dir() + "/tiny_mlp.seqrt", "--passes"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(result.err.empty()) << result.err;
  const std::string& out = result.out;
  size_t before = out.find("graph before passes (");
  size_t passes = out.find("\npasses:\n");
  size_t after = out.find("graph after passes (");
  ASSERT_NE(before, std::string::npos) << out;
  ASSERT_NE(passes, std::string::npos) << out;
  ASSERT_NE(after, std::string::npos) << out;
  EXPECT_LT(before, passes);
  EXPECT_LT(passes, after);
  for (const Pass& pass : default_passes()) {
    EXPECT_NE(out.find("  " + pass.name + " ", passes), std::string::npos)
        << pass.name;
  }
  // The sample's LayerNormalization is printed in both graphs.
  EXPECT_NE(out.find("LayerNormalization", before), std::string::npos);
  EXPECT_NE(out.find("LayerNormalization", after), std::string::npos);
}

TEST(inspect_passes, WithoutTheFlagNothingIsOptimised) {
  CommandResult result =
      run_seqrt({"inspect", sample_dir() + "/tiny_mlp.seqrt"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out.find("passes"), std::string::npos) << result.out;
}

}  // namespace
}  // namespace seqrt::e2e
