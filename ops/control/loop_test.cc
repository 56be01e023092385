// Loop: inference from the body's declared types, and the error paths.
// Running the body needs an executor; backends/reference/control_flow_test.cc
// covers that.
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

}  // namespace
}  // namespace seqrt
