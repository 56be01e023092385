#include <gtest/gtest.h>

#include <memory>

#include "compiler/passes/pass_test_util.h"

namespace seqrt {
namespace {

using pass_testing::apply;
using pass_testing::build_or_die;
using pass_testing::count_ops;
using pass_testing::expect_close;
using pass_testing::random_tensor;
using pass_testing::run_reference;

TEST(FoldConstants, FoldsChainsOfConstantNodes) {
  GraphBuilder b("g");
  ValueId x = b.input("x", DType::kF32, {2, 3});
  ValueId c = b.constant("c", random_tensor({2, 3}, 41));
  ValueId two = b.constant("two", Tensor::scalar(2.0f));
  ValueId folded = b.add("Mul", {b.add("Add", {c, c}), two});
  b.output(b.add("Add", {x, folded}), "y");
  b.output(b.add("Exp", {c}), "exp_c");  // a graph output that folds
  Graph graph = build_or_die(std::move(b));
  Graph result = apply(graph, {fold_constants_pass()});
  ASSERT_EQ(result.nodes.size(), 1u);
  EXPECT_EQ(result.nodes[0].op, "Add");
  EXPECT_EQ(result.value(result.outputs[1]).name, "exp_c");
  EXPECT_TRUE(result.is_constant(result.outputs[1]));

  std::map<std::string, Tensor> feeds = {{"x", random_tensor({2, 3}, 42)}};
  std::map<std::string, Tensor> before = run_reference(graph, feeds);
  std::map<std::string, Tensor> after = run_reference(result, feeds);
  expect_close(after.at("y"), before.at("y"));
  expect_close(after.at("exp_c"), before.at("exp_c"));
}

TEST(FoldConstants, FoldsValuesInferenceKnows) {
  GraphBuilder b("g");
  ValueId x = b.input("x", DType::kF32, {2, 3});
  ValueId shape = b.add("Shape", {x});
  ValueId flat = b.constant("flat", Tensor::from_vector<int64_t>({1}, {6}));
  ValueId y = b.add("Reshape", {b.add("Reshape", {x, flat}), shape});
  b.output(y, "y");
  Graph result = apply(build_or_die(std::move(b)), {fold_constants_pass()});
  EXPECT_EQ(count_ops(result, "Shape"), 0u);
  EXPECT_EQ(count_ops(result, "Reshape"), 2u);
}

TEST(FoldConstants, LeavesHugeOutputsAndSubgraphNodes) {
  GraphBuilder b("g");
  ValueId dims =
      b.constant("dims", Tensor::from_vector<int64_t>({2}, {4100, 4100}));
  ValueId huge = b.add("ConstantOfShape", {dims});  // 67.2 MB > 64 MiB
  b.output(b.add("ReduceSum", {huge}), "sum");
  Graph result = apply(build_or_die(std::move(b)), {fold_constants_pass()});
  EXPECT_EQ(count_ops(result, "ConstantOfShape"), 1u);

  GraphBuilder branch("branch");
  ValueId one = branch.constant("one", Tensor::scalar(1.0f));
  branch.output(branch.add("Add", {one, one}), "out");
  auto body = std::make_shared<Graph>(build_or_die(std::move(branch)));
  GraphBuilder main("main");
  ValueId cond = main.constant("cond", Tensor::scalar(true));
  main.output(main.add("If", {cond},
                       {{"then_branch", Attribute(body)},
                        {"else_branch", Attribute(body)}}),
              "y");
  Graph folded = apply(build_or_die(std::move(main)), {fold_constants_pass()});
  // The If stays (it holds subgraphs); the Add inside its branches folds.
  ASSERT_EQ(folded.nodes.size(), 1u);
  EXPECT_EQ(folded.nodes[0].attr("then_branch")->as_graph()->nodes.size(), 0u);
}

}  // namespace
}  // namespace seqrt
