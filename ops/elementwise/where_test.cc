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

TEST(Where, SelectsWithThreeWayBroadcasting) {
  Tensor condition = Tensor::from_vector<bool>({2, 1}, {true, false});
  Tensor x = Tensor::from_vector<float>({3}, {1, 2, 3});
  Tensor y = Tensor::from_vector<float>({}, {-1});
  Tensor out = run_ok("Where", {condition, x, y});
  EXPECT_EQ(out.dtype(), DType::kF32);
  EXPECT_EQ(out.dims(), (std::vector<int64_t>{2, 3}));
  expect_values(out, {1, 2, 3, -1, -1, -1});
}

TEST(Where, CopiesIntegersExactly) {
  int64_t big = (int64_t{1} << 60) + 3;
  Tensor condition = Tensor::from_vector<bool>({2}, {false, true});
  Tensor x = Tensor::from_vector<int64_t>({2}, {big, big});
  Tensor y = Tensor::from_vector<int64_t>({2}, {7, 7});
  Tensor out = run_ok("Where", {condition, x, y});
  EXPECT_EQ(out.element_i64(0), 7);
  EXPECT_EQ(out.element_i64(1), big);
}

TEST(Where, DtypeAndShapeErrors) {
  Tensor f = Tensor::from_vector<float>({2}, {1, 0});
  Tensor i = Tensor::from_vector<int32_t>({2}, {1, 0});
  Tensor c = Tensor::from_vector<bool>({2}, {true, false});
  expect_error(run_op("Where", {f, f, f}).status(),
               {"[Where] node 'test'", "input 'condition' must be bool"});
  expect_error(run_op("Where", {c, f, i}).status(), {"[Where]", "same dtype"});
  Tensor c3 = Tensor::from_vector<bool>({3}, {true, false, true});
  expect_error(run_op("Where", {c3, f, f}).status(),
               {"[Where]", "cannot be broadcast"});
}

TEST(Where, Inference) {
  auto out = infer_types(
      "Where", {info(DType::kBool, Shape{Dim::symbol("s"), 1}),
                info(DType::kI8, Shape{4}), info(DType::kI8, Shape{1, 1})});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].dtype, DType::kI8);
  EXPECT_EQ((*out)[0].shape, (Shape{Dim::symbol("s"), 4}));
}

}  // namespace
}  // namespace seqrt
