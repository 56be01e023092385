#include "compiler/passes/expand_variadic.h"

#include <gtest/gtest.h>

#include "compiler/passes/pass_test_util.h"

namespace seqrt {
namespace {

using pass_testing::build_or_die;
using pass_testing::expect_fused;
using pass_testing::random_tensor;

// `op` over inputs of dims (2,3,4), (3,1), (4) and so on, `count` of them.
Graph variadic_graph(const std::string& op, size_t count) {
  const std::vector<Shape> shapes = {Shape{2, 3, 4}, Shape{3, 1}, Shape{4}};
  GraphBuilder b("variadic");
  std::vector<ValueId> inputs;
  for (size_t i = 0; i < count; ++i) {
    inputs.push_back(
        b.input("x" + std::to_string(i), DType::kF32, shapes[i % 3]));
  }
  b.output(b.add(op, inputs), "y");
  return build_or_die(std::move(b));
}

struct VariadicCase {
  std::string op;
  size_t count;
};

class ExpandVariadic : public testing::TestWithParam<VariadicCase> {};

TEST_P(ExpandVariadic, GivesTheSameResultAsTheOp) {
  const VariadicCase& c = GetParam();
  const std::vector<std::vector<int64_t>> dims = {{2, 3, 4}, {3, 1}, {4}};
  std::map<std::string, Tensor> feeds;
  for (size_t i = 0; i < c.count; ++i) {
    feeds["x" + std::to_string(i)] =
        random_tensor(dims[i % 3], static_cast<uint32_t>(10 + i));
  }
  // Max and Min stay as two-input nodes: count the variadic ones left.
  Graph expanded =
      expect_fused(variadic_graph(c.op, c.count),
                   Pass{"expand_variadic", expand_variadic}, "Sum", 0, feeds);
  for (const Node& node : expanded.nodes) {
    EXPECT_FALSE(is_variadic_to_expand(node)) << node.label();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Ops, ExpandVariadic,
    testing::Values(VariadicCase{"Sum", 3}, VariadicCase{"Sum", 1},
                    VariadicCase{"Max", 3}, VariadicCase{"Min", 1},
                    VariadicCase{"Min", 4}),
    [](const testing::TestParamInfo<VariadicCase>& info) {
      return info.param.op + std::to_string(info.param.count);
    });

TEST(ExpandVariadic, LeavesTwoInputMaxAlone) {
  Graph graph = variadic_graph("Max", 2);
  EXPECT_FALSE(is_variadic_to_expand(graph.nodes[0]));
  pass_testing::expect_unchanged(graph,
                                 Pass{"expand_variadic", expand_variadic});
}

}  // namespace
}  // namespace seqrt
