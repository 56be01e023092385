#include <gtest/gtest.h>

#include "ops/op_test_util.h"

namespace seqrt {
namespace {

using op_testing::expect_error;
using op_testing::expect_values;
using op_testing::infer_types;
using op_testing::info;
using op_testing::run_ok;
using op_testing::run_op;

const Tensor kX = Tensor::from_vector<float>({2, 3}, {1, 2, 3, 4, 5, 6});

TEST(CumSum, ForwardAndReverseExclusive) {
  Tensor axis = Tensor::scalar<int64_t>(1);
  expect_values(run_ok("CumSum", {kX, axis}), {1, 3, 6, 4, 9, 15});
  expect_values(run_ok("CumSum", {kX, axis}, {{"exclusive", 1}}),
                {0, 1, 3, 0, 4, 9});
  expect_values(run_ok("CumSum", {kX, axis}, {{"reverse", 1}}),
                {6, 5, 3, 15, 11, 6});
  expect_values(
      run_ok("CumSum", {kX, axis}, {{"reverse", 1}, {"exclusive", 1}}),
      {5, 3, 0, 11, 6, 0});
}

TEST(CumSum, AxisZeroNegativeAndI32Axis) {
  Tensor y = run_ok("CumSum", {kX, Tensor::scalar<int32_t>(0)});
  expect_values(y, {1, 2, 3, 5, 7, 9});
  EXPECT_TRUE(y.same_as(run_ok("CumSum", {kX, Tensor::scalar<int64_t>(-2)})));
  // A one-element 1-D axis is accepted like a scalar.
  EXPECT_TRUE(y.same_as(
      run_ok("CumSum", {kX, Tensor::from_vector<int64_t>({1}, {0})})));
}

TEST(CumSum, IntegersAreExact) {
  int64_t big = (int64_t{1} << 53) + 1;
  Tensor x = Tensor::from_vector<int64_t>({3}, {big, 1, 1});
  Tensor y = run_ok("CumSum", {x, Tensor::scalar<int64_t>(0)});
  EXPECT_EQ(y.dtype(), DType::kI64);
  EXPECT_EQ(y.element_i64(2), big + 2);
}

TEST(CumSum, Errors) {
  expect_error(run_op("CumSum", {kX, Tensor::scalar<int64_t>(2)}).status(),
               {"[CumSum] node 'test'", "axis 2"});
  expect_error(run_op("CumSum", {kX, Tensor::scalar<float>(0)}).status(),
               {"[CumSum]", "input 'axis' must be i32 or i64"});
  expect_error(run_op("CumSum", {kX, Tensor::from_vector<int64_t>({2}, {0, 1})})
                   .status(),
               {"[CumSum]", "must be a scalar"});
  expect_error(run_op("CumSum", {Tensor::from_vector<int8_t>({1}, {1}),
                                 Tensor::scalar<int64_t>(0)})
                   .status(),
               {"[CumSum]", "got i8"});
}

TEST(CumSum, Inference) {
  Shape x{Dim::symbol("batch"), Dim::symbol("seq")};
  auto out =
      infer_types("CumSum", {info(DType::kF32, x), info(DType::kI64, Shape{})});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].dtype, DType::kF32);
  EXPECT_EQ((*out)[0].shape, x);
  Tensor axis = Tensor::scalar<int64_t>(5);
  expect_error(infer_types("CumSum", {info(DType::kF32, x),
                                      info(DType::kI64, Shape{}, &axis)})
                   .status(),
               {"[CumSum]", "axis 5"});
}

}  // namespace
}  // namespace seqrt
