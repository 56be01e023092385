#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ops/op_test_util.h"

namespace seqrt {
namespace {

using op_testing::expect_error;
using op_testing::expect_values;
using op_testing::infer_types;
using op_testing::info;
using op_testing::run_ok;
using op_testing::run_op;

Tensor axes(std::vector<int64_t> values) {
  return Tensor::from_vector<int64_t>({static_cast<int64_t>(values.size())},
                                      values);
}

// (2,3): [[1, 2, 3], [4, 5, 6]]
const Tensor kX = Tensor::from_vector<float>({2, 3}, {1, 2, 3, 4, 5, 6});

TEST(Reduce, AlongOneAxisKeepingDims) {
  Tensor sum = run_ok("ReduceSum", {kX, axes({1})});
  EXPECT_EQ(sum.dims(), (std::vector<int64_t>{2, 1}));
  expect_values(sum, {6, 15});
  expect_values(run_ok("ReduceMean", {kX, axes({0})}), {2.5, 3.5, 4.5});
  expect_values(run_ok("ReduceMax", {kX, axes({-1})}), {3, 6});
  expect_values(run_ok("ReduceMin", {kX, axes({-2})}), {1, 2, 3});
}

TEST(Reduce, DroppingDimsAndAllAxes) {
  Tensor sum = run_ok("ReduceSum", {kX, axes({0})}, {{"keepdims", 0}});
  EXPECT_EQ(sum.dims(), (std::vector<int64_t>{3}));
  expect_values(sum, {5, 7, 9});
  // No axes input: every axis.
  Tensor all = run_ok("ReduceMean", {kX});
  EXPECT_EQ(all.dims(), (std::vector<int64_t>{1, 1}));
  expect_values(all, {3.5});
  Tensor scalar = run_ok("ReduceMax", {kX, axes({})}, {{"keepdims", 0}});
  EXPECT_EQ(scalar.rank(), 0u);
  expect_values(scalar, {6});
  // Both axes listed, in any order.
  expect_values(run_ok("ReduceMin", {kX, axes({1, 0})}), {1});
}

TEST(Reduce, NoopWithEmptyAxes) {
  Tensor same =
      run_ok("ReduceSum", {kX, axes({})}, {{"noop_with_empty_axes", 1}});
  EXPECT_EQ(same.dims(), kX.dims());
  expect_values(same, {1, 2, 3, 4, 5, 6});
  // A non-empty list still reduces.
  expect_values(
      run_ok("ReduceSum", {kX, axes({0})}, {{"noop_with_empty_axes", 1}}),
      {5, 7, 9});
}

TEST(Reduce, IntegersStayExact) {
  int64_t big = (int64_t{1} << 53) + 1;
  Tensor x = Tensor::from_vector<int64_t>({3}, {big, 1, -3});
  Tensor sum = run_ok("ReduceSum", {x});
  EXPECT_EQ(sum.dtype(), DType::kI64);
  EXPECT_EQ(sum.element_i64(0), big - 2);
  EXPECT_EQ(run_ok("ReduceMax", {x}).element_i64(0), big);
  // Integer means truncate toward zero: (-7) / 2.
  Tensor m =
      run_ok("ReduceMean", {Tensor::from_vector<int32_t>({2}, {-3, -4})});
  EXPECT_EQ(m.element_i64(0), -3);
}

TEST(Reduce, BoolMaxMinAndNan) {
  Tensor b = Tensor::from_vector<bool>({3}, {false, true, false});
  expect_values(run_ok("ReduceMax", {b}), {1});
  expect_values(run_ok("ReduceMin", {b}), {0});
  expect_error(run_op("ReduceSum", {b}).status(), {"[ReduceSum]", "got bool"});
  Tensor x = Tensor::from_vector<float>({3}, {1, std::nanf(""), 2});
  EXPECT_TRUE(std::isnan(run_ok("ReduceMax", {x}).element_f64(0)));
  EXPECT_TRUE(std::isnan(run_ok("ReduceMin", {x}).element_f64(0)));
}

TEST(Reduce, EmptyReductions) {
  Tensor empty = Tensor::allocate(DType::kF32, {2, 0}).value();
  expect_values(run_ok("ReduceSum", {empty, axes({1})}), {0, 0});
  EXPECT_EQ(run_ok("ReduceMax", {empty, axes({1})}).element_f64(0),
            -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(
      std::isnan(run_ok("ReduceMean", {empty, axes({1})}).element_f64(0)));
  Tensor empty_i8 = Tensor::allocate(DType::kI8, {0}).value();
  EXPECT_EQ(run_ok("ReduceMax", {empty_i8}).element_i64(0), -128);
  EXPECT_EQ(run_ok("ReduceMin", {empty_i8}).element_i64(0), 127);
  expect_error(run_op("ReduceMean", {empty_i8}).status(),
               {"[ReduceMean]", "undefined"});
}

TEST(Reduce, Errors) {
  expect_error(run_op("ReduceSum", {kX, axes({2})}).status(),
               {"[ReduceSum] node 'test'", "axis 2", "rank 2"});
  expect_error(run_op("ReduceMean", {kX, axes({1, -1})}).status(),
               {"[ReduceMean]", "listed twice"});
  expect_error(run_op("ReduceMax", {kX, Tensor::from_vector<int32_t>({1}, {0})})
                   .status(),
               {"[ReduceMax]", "input 'axes' must be i64"});
  expect_error(
      run_op("ReduceMin", {kX, Tensor::from_vector<int64_t>({1, 1}, {0})})
          .status(),
      {"[ReduceMin]", "must be 1-D"});
}

TEST(Reduce, InferenceWithConstantAxes) {
  Shape x{Dim::symbol("batch"), Dim::symbol("seq"), 8};
  Tensor last = axes({-1});
  auto out = infer_types(
      "ReduceMean", {info(DType::kF32, x), info(DType::kI64, Shape{1}, &last)});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].shape,
            (Shape{Dim::symbol("batch"), Dim::symbol("seq"), 1}));

  out = infer_types("ReduceSum",
                    {info(DType::kF32, x), info(DType::kI64, Shape{1}, &last)},
                    {{"keepdims", 0}});
  ASSERT_TRUE(out.is_ok());
  EXPECT_EQ((*out)[0].shape, (Shape{Dim::symbol("batch"), Dim::symbol("seq")}));

  // No axes: all axes, so even an unknown rank gives a scalar without dims.
  out = infer_types("ReduceMax", {info(DType::kI32, std::nullopt)},
                    {{"keepdims", 0}});
  ASSERT_TRUE(out.is_ok());
  EXPECT_EQ((*out)[0].dtype, DType::kI32);
  EXPECT_EQ((*out)[0].shape, Shape());

  Tensor bad = axes({3});
  expect_error(infer_types("ReduceSum", {info(DType::kF32, x),
                                         info(DType::kI64, Shape{1}, &bad)})
                   .status(),
               {"[ReduceSum]", "axis 3"});
}

TEST(Reduce, InferenceWithUnknownAxes) {
  Shape x{Dim::symbol("batch"), 1, 8};
  auto out = infer_types("ReduceSum",
                         {info(DType::kF32, x), info(DType::kI64, Shape{2})});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  ASSERT_TRUE((*out)[0].shape.has_value());
  const Shape& shape = *(*out)[0].shape;
  ASSERT_EQ(shape.rank(), 3u);
  EXPECT_TRUE(shape[0].is_unknown());
  EXPECT_EQ(shape[1], Dim(1));
  EXPECT_TRUE(shape[2].is_unknown());

  out = infer_types("ReduceSum",
                    {info(DType::kF32, x), info(DType::kI64, Shape{2})},
                    {{"keepdims", 0}});
  ASSERT_TRUE(out.is_ok());
  EXPECT_FALSE((*out)[0].shape.has_value());

  // An axes input known to be empty is the same as none.
  out = infer_types("ReduceSum",
                    {info(DType::kF32, x), info(DType::kI64, Shape{0})},
                    {{"noop_with_empty_axes", 1}});
  ASSERT_TRUE(out.is_ok());
  EXPECT_EQ((*out)[0].shape, x);
}

}  // namespace
}  // namespace seqrt
