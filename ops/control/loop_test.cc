// Loop: inference from the body's declared types, and the error paths.
// Runs of the body: backends/reference/control_flow_test.cc, and here the
// prepared body kept across runs (PreparingRunner).
#include <gtest/gtest.h>

#include "ops/control/control_test_util.h"
#include "ops/op_test_util.h"

namespace seqrt {
namespace {

using namespace op_testing;  // NOLINT

// (i, cond, v) -> (cond, v + v, v * v): one carried value, one scan output.
std::shared_ptr<Graph> doubling_body(DType dtype = DType::kF32) {
  GraphBuilder b("body");
  b.input("i", DType::kI64, Shape{});
  ValueId cond = b.input("cond_in", DType::kBool, Shape{});
  ValueId v = b.input("v", dtype, Shape{3});
  b.output(b.add("Identity", {cond}), "cond_out");
  b.output(b.add("Add", {v, v}), "v_next");
  b.output(b.add("Mul", {v, v}), "v_squared");
  return typed_graph(std::move(b));
}

AttrMap body_attr(std::shared_ptr<Graph> body) { return {{"body", body}}; }

std::vector<ValueInfo> loop_inputs(DType cond = DType::kBool,
                                   DType carried = DType::kF32) {
  return {typed(DType::kI64, Shape{}), typed(cond, Shape{}),
          typed(carried, Shape{3})};
}

TEST(Loop, InfersCarriedValuesAndScanOutputs) {
  auto out = infer_types("Loop", loop_inputs(), body_attr(doubling_body()), 2);
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].dtype, DType::kF32);
  EXPECT_EQ(*(*out)[0].shape, Shape({3}));
  EXPECT_EQ(*(*out)[1].shape, Shape({Dim::unknown(), 3}));
}

TEST(Loop, TripCountAndCondAreOptional) {
  std::vector<ValueInfo> inputs = loop_inputs();
  inputs[0] = omitted();
  inputs[1] = omitted();
  auto out = infer_types("Loop", inputs, body_attr(doubling_body()), 2);
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
}

TEST(Loop, CondMustBeBool) {
  expect_error(infer_types("Loop", loop_inputs(DType::kF32),
                           body_attr(doubling_body()), 2)
                   .status(),
               {"[Loop] node 'test'", "input 'cond' must be bool, got f32"});
  expect_error(run_op("Loop",
                      {Tensor::scalar<int64_t>(2), Tensor::scalar<float>(1),
                       f32({3}, {1, 2, 3})},
                      body_attr(doubling_body()), 2)
                   .status(),
               {"[Loop]", "input 'cond' must be bool, got f32"});
}

TEST(Loop, TripCountMustBeOneI64) {
  std::vector<ValueInfo> inputs = loop_inputs();
  inputs[0] = typed(DType::kI32, Shape{});
  expect_error(
      infer_types("Loop", inputs, body_attr(doubling_body()), 2).status(),
      {"[Loop]", "input 'M' must be i64, got i32"});
  expect_error(
      run_op("Loop",
             {Tensor::scalar<int64_t>(-2), Tensor(), f32({3}, {1, 2, 3})},
             body_attr(doubling_body()), 2)
          .status(),
      {"[Loop]", "input 'M' must be >= 0, got -2"});
}

TEST(Loop, BodyMustTakeIterationCondAndCarried) {
  GraphBuilder b("short");
  b.input("i", DType::kI64, Shape{});
  ValueId cond = b.input("cond_in", DType::kBool, Shape{});
  b.output(b.add("Identity", {cond}), "cond_out");
  b.output(b.add("Identity", {cond}), "extra");
  expect_error(infer_types("Loop", loop_inputs(),
                           body_attr(typed_graph(std::move(b))), 2)
                   .status(),
               {"[Loop] node 'test'", "'body' must take 3 inputs, it takes 2"});
}

TEST(Loop, BodyInputsHaveFixedRoles) {
  GraphBuilder b("swapped");
  ValueId cond = b.input("cond_in", DType::kBool, Shape{});
  b.input("i", DType::kI64, Shape{});
  ValueId v = b.input("v", DType::kF32, Shape{3});
  b.output(b.add("Identity", {cond}), "cond_out");
  b.output(b.add("Identity", {v}), "v_next");
  expect_error(infer_types("Loop", loop_inputs(),
                           body_attr(typed_graph(std::move(b))), 1)
                   .status(),
               {"[Loop]", "body input 0 ('cond_in', the iteration number)",
                "must be i64, got bool"});
}

TEST(Loop, CarriedDtypeMustMatchBody) {
  expect_error(
      infer_types("Loop", loop_inputs(DType::kBool, DType::kI64),
                  body_attr(doubling_body()), 2)
          .status(),
      {"[Loop] node 'test'", "loop-carried value 0", "must be f32, got i64"});
}

TEST(Loop, BodyCondOutputMustBeBool) {
  GraphBuilder b("float_cond");
  b.input("i", DType::kI64, Shape{});
  b.input("cond_in", DType::kBool, Shape{});
  ValueId v = b.input("v", DType::kF32, Shape{});
  b.output(b.add("Identity", {v}), "cond_out");
  b.output(b.add("Identity", {v}), "v_next");
  std::vector<ValueInfo> inputs = {typed(DType::kI64, Shape{}),
                                   typed(DType::kBool, Shape{}),
                                   typed(DType::kF32, Shape{})};
  expect_error(
      infer_types("Loop", inputs, body_attr(typed_graph(std::move(b))), 1)
          .status(),
      {"[Loop]", "body output 0 (the condition) must be bool"});
}

TEST(Loop, KernelWithoutRunnerFailsCleanly) {
  Status status =
      run_op("Loop",
             {Tensor::scalar<int64_t>(2), Tensor(), f32({3}, {1, 2, 3})},
             body_attr(doubling_body()), 2)
          .status();
  expect_error(status, {"[Loop] node 'test'", "no subgraph runner"});
  EXPECT_EQ(status.code(), StatusCode::kInternal);
}

// A Loop of doubling_body over a value of symbolic dims, M from an input.
std::shared_ptr<Graph> doubling_graph() {
  GraphBuilder body("body");
  body.input("i", DType::kI64, Shape{});
  ValueId cond = body.input("cond_in", DType::kBool, Shape{});
  ValueId v = body.input("v", DType::kF32, Shape{sym("n")});
  body.output(body.add("Identity", {cond}), "cond_out");
  body.output(body.add("Add", {v, v}), "v_next");
  body.output(body.add("Mul", {v, v}), "v_squared");
  GraphBuilder b("loop");
  ValueId m = b.input("M", DType::kI64, Shape{});
  ValueId v0 = b.input("v0", DType::kF32, Shape{sym("n")});
  std::vector<ValueId> outs = b.add_node(
      "Loop", {m, kNoValue, v0},
      body_attr(std::make_shared<Graph>(*typed_graph(std::move(body)))), 2);
  b.output(outs[0], "v_last");
  b.output(outs[1], "squares");
  return typed_graph(std::move(b));
}

// As for Scan: the body kept between runs, prepared again for other dims,
// the results those of the body interpreted every iteration, and a run's
// held outputs intact after the next run.
TEST(Loop, PreparedBodyKeptAcrossRunsOfEitherShape) {
  std::shared_ptr<Graph> graph = doubling_graph();
  ASSERT_NE(graph, nullptr);
  PreparingRunner runner(*graph);
  auto inputs = [](int64_t trips, Tensor v) {
    return std::vector<Tensor>{Tensor::scalar<int64_t>(trips), std::move(v)};
  };
  auto first = runner.run(inputs(3, f32({2}, {1, -2})));
  ASSERT_TRUE(first.is_ok()) << first.status().to_string();
  const int64_t choices = runner.choices();
  const Tensor held_last = (*first)[0].clone();
  const Tensor held_squares = (*first)[1].clone();
  expect_values((*first)[0], {8, -16});
  expect_values((*first)[1], {1, 4, 4, 16, 16, 64});
  auto again = runner.run(inputs(2, f32({2}, {3, 1})));
  ASSERT_TRUE(again.is_ok()) << again.status().to_string();
  EXPECT_EQ(runner.choices(), choices);
  expect_values((*again)[0], {12, 4});
  expect_values((*again)[1], {9, 1, 36, 4});
  EXPECT_TRUE((*first)[0].same_as(held_last));
  EXPECT_TRUE((*first)[1].same_as(held_squares));
  auto other = runner.run(inputs(2, f32({3}, {1, 2, 3})));
  ASSERT_TRUE(other.is_ok()) << other.status().to_string();
  EXPECT_GT(runner.choices(), choices);
  auto want = runner.run_unprepared(inputs(2, f32({3}, {1, 2, 3})));
  ASSERT_TRUE(want.is_ok()) << want.status().to_string();
  EXPECT_TRUE((*other)[0].same_as((*want)[0]));
  EXPECT_TRUE((*other)[1].same_as((*want)[1]));
  EXPECT_TRUE((*first)[0].same_as(held_last));
}

}  // namespace
}  // namespace seqrt
