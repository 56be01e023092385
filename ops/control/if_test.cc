// If: inference from the branches' declared types, and the error paths.
// Running branches needs an executor; backends/reference/control_flow_test.cc
// covers that.
#include <gtest/gtest.h>

#include "ops/control/control_test_util.h"
#include "ops/op_test_util.h"

namespace seqrt {
namespace {

using namespace op_testing;  // NOLINT

// A branch giving a constant of `dtype` and `dims`.
std::shared_ptr<Graph> constant_branch(DType dtype, std::vector<int64_t> dims) {
  GraphBuilder b("branch");
  Tensor value = Tensor::allocate(dtype, std::move(dims)).value();
  b.output(b.add("Identity", {b.constant("c", value)}), "y");
  return typed_graph(std::move(b));
}

AttrMap branches(std::shared_ptr<Graph> then_branch,
                 std::shared_ptr<Graph> else_branch) {
  return {{"then_branch", then_branch}, {"else_branch", else_branch}};
}

TEST(If, MergesBranchShapes) {
  auto out = infer_types("If", {typed(DType::kBool, Shape{})},
                         branches(constant_branch(DType::kF32, {2, 3}),
                                  constant_branch(DType::kF32, {4, 3})));
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].dtype, DType::kF32);
  EXPECT_EQ(*(*out)[0].shape, Shape({Dim::unknown(), 3}));
}

TEST(If, KnownCondTakesThatBranchsType) {
  Tensor no = Tensor::scalar<bool>(false);
  auto out = infer_types("If", {known(no)},
                         branches(constant_branch(DType::kF32, {2, 3}),
                                  constant_branch(DType::kF32, {5})));
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ(*(*out)[0].shape, Shape({5}));
}

// With a constant cond, infer_graph types only the branch taken: the other
// may be invalid for these shapes (ONNX function bodies rely on it).
TEST(If, InferGraphSkipsTheBranchNotTaken) {
  GraphBuilder bad("bad_branch");
  ValueId x_in_branch = bad.capture("x", DType::kF32, Shape{5});
  Tensor sizes = Tensor::from_vector<int64_t>({1}, {2});
  bad.output(bad.add("Reshape", {x_in_branch, bad.constant("sizes", sizes)}),
             "y");
  auto bad_branch = std::make_shared<Graph>(std::move(bad).build().value());

  GraphBuilder good("good_branch");
  good.output(good.add("Neg", {good.capture("x", DType::kF32, Shape{5})}), "y");
  auto good_branch = std::make_shared<Graph>(std::move(good).build().value());

  GraphBuilder b("main");
  ValueId x = b.input("x", DType::kF32, Shape{5});
  (void)x;
  ValueId cond = b.constant("cond", Tensor::scalar<bool>(false));
  b.output(b.add("If", {cond}, branches(bad_branch, good_branch)), "y");
  Result<Graph> graph = std::move(b).build();
  ASSERT_TRUE(graph.is_ok()) << graph.status().to_string();
  Status status = infer_graph(*graph);
  ASSERT_TRUE(status.is_ok()) << status.to_string();
  EXPECT_EQ(*graph->value(graph->outputs[0]).shape, Shape({5}));

  // The same graph with an unknown cond types both branches and fails.
  GraphBuilder unknown("main");
  unknown.input("x", DType::kF32, Shape{5});
  ValueId c = unknown.input("cond", DType::kBool, Shape{});
  unknown.output(unknown.add("If", {c}, branches(bad_branch, good_branch)),
                 "y");
  Result<Graph> both = std::move(unknown).build();
  ASSERT_TRUE(both.is_ok()) << both.status().to_string();
  EXPECT_FALSE(infer_graph(*both).is_ok());
}

TEST(If, BranchesMustAgreeInDtype) {
  expect_error(infer_types("If", {typed(DType::kBool, Shape{})},
                           branches(constant_branch(DType::kF32, {2}),
                                    constant_branch(DType::kI64, {2})))
                   .status(),
               {"[If] node 'test'", "differ in dtype", "f32", "i64"});
}

TEST(If, BranchesOfDifferentRankGiveAnUnknownRank) {
  // ONNX lets the branches' shapes differ, rank included.
  auto out = infer_types("If", {typed(DType::kBool, Shape{})},
                         branches(constant_branch(DType::kF32, {2}),
                                  constant_branch(DType::kF32, {2, 1})));
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].dtype, DType::kF32);
  EXPECT_FALSE((*out)[0].shape.has_value());
}

TEST(If, CondMustBeOneBool) {
  auto branch = constant_branch(DType::kF32, {2});
  expect_error(
      infer_types("If", {typed(DType::kF32, Shape{})}, branches(branch, branch))
          .status(),
      {"[If] node 'test'", "input 'cond' must be bool, got f32"});
  expect_error(
      run_op("If", {Tensor::scalar<int64_t>(1)}, branches(branch, branch))
          .status(),
      {"[If]", "input 'cond' must be bool"});
  expect_error(infer_types("If", {typed(DType::kBool, Shape{2})},
                           branches(branch, branch))
                   .status(),
               {"[If]", "one element"});
}

TEST(If, BranchesTakeNoInputsAndGiveEveryOutput) {
  GraphBuilder b("with_input");
  b.output(b.add("Neg", {b.input("x", DType::kF32, Shape{2})}), "y");
  auto with_input = typed_graph(std::move(b));
  auto branch = constant_branch(DType::kF32, {2});
  expect_error(infer_types("If", {typed(DType::kBool, Shape{})},
                           branches(with_input, branch))
                   .status(),
               {"[If]", "'then_branch' must take 0 inputs, it takes 1"});
  expect_error(infer_types("If", {typed(DType::kBool, Shape{})},
                           branches(branch, branch), 2)
                   .status(),
               {"[If]", "'then_branch' must give 2 outputs, it gives 1"});
}

TEST(If, UntypedBranchOutputIsAnError) {
  GraphBuilder b("untyped");
  b.output(b.add("Identity", {b.constant("c", f32({2}, {1, 2}))}), "y");
  Result<Graph> graph = std::move(b).build();  // not inferred
  ASSERT_TRUE(graph.is_ok());
  auto untyped = std::make_shared<Graph>(std::move(graph).value());
  expect_error(infer_types("If", {typed(DType::kBool, Shape{})},
                           branches(untyped, untyped))
                   .status(),
               {"[If]", "of 'then_branch' has no known dtype"});
}

TEST(If, KernelWithoutRunnerFailsCleanly) {
  auto branch = constant_branch(DType::kF32, {2});
  Status status =
      run_op("If", {Tensor::scalar<bool>(true)}, branches(branch, branch))
          .status();
  expect_error(status, {"[If] node 'test'", "no subgraph runner"});
  EXPECT_EQ(status.code(), StatusCode::kInternal);
}

}  // namespace
}  // namespace seqrt
