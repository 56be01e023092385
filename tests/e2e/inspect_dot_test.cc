// `seqrt inspect FILE --dot OUT` on the tiny MLP sample: a Graphviz file with
// one box per node and the model's inputs and outputs.
#include <string>

#include <gtest/gtest.h>

#include "tests/e2e/cli_runner.h"

namespace seqrt::e2e {
namespace {

size_t count(const std::string& text, const std::string& part) {
  size_t found = 0;
  for (size_t at = text.find(part); at != std::string::npos;
       at = text.find(part, at + part.size())) {
    ++found;
  }
  return found;
}

TEST(inspect_dot, WritesOneBoxPerNodeAndTheInputsAndOutputs) {
  std::string dot_path = sample_dir() + "/tiny_mlp.dot";
  CommandResult result = run_seqrt(
      {"inspect", sample_dir() + "/tiny_mlp.seqrt", "--dot", dot_path});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("graph picture: " + dot_path), std::string::npos)
      << result.out;
  std::string dot = read_text(dot_path);
  EXPECT_EQ(dot.rfind("digraph \"tiny_mlp\" {", 0), 0u) << dot;
  EXPECT_EQ(count(dot, "shape=box"), 18u) << dot;  // the model's 18 nodes
  EXPECT_NE(dot.find("label=\"tokens\\ni64(batch,seq)\""), std::string::npos);
  EXPECT_NE(dot.find("label=\"logits\\nf32(batch,seq,64)\""),
            std::string::npos);
}

TEST(inspect_dot, AnUnwritablePathIsAOneLineError) {
  CommandResult result =
      run_seqrt({"inspect", sample_dir() + "/tiny_mlp.seqrt", "--dot",
                 sample_dir() + "/no/such/dir/g.dot"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find("seqrt: error: cannot write '"), std::string::npos)
      << result.err;
  EXPECT_NE(result.err.find("no/such/dir/g.dot"), std::string::npos);
}

}  // namespace
}  // namespace seqrt::e2e
