#include <gtest/gtest.h>

#include "ops/op_test_util.h"

namespace seqrt {
namespace {

using op_testing::infer_op;
using op_testing::iota;
using op_testing::run_op;
using op_testing::sym;
using op_testing::typed;
using op_testing::values_of;

TEST(Transpose, DefaultReversesDims) {
  auto out = run_op("Transpose", {iota(DType::kF32, {2, 3})});
  ASSERT_TRUE(out.is_ok());
  EXPECT_EQ((*out)[0].dims(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(values_of((*out)[0]), (std::vector<double>{0, 3, 1, 4, 2, 5}));
}

TEST(Transpose, AppliesPerm) {
  Tensor x = iota(DType::kI8, {2, 3, 2});
  auto out =
      run_op("Transpose", {x}, {{"perm", std::vector<int64_t>{1, 0, 2}}});
  ASSERT_TRUE(out.is_ok());
  EXPECT_EQ((*out)[0].dtype(), DType::kI8);
  EXPECT_EQ((*out)[0].dims(), (std::vector<int64_t>{3, 2, 2}));
  EXPECT_EQ(values_of((*out)[0]),
            (std::vector<double>{0, 1, 6, 7, 2, 3, 8, 9, 4, 5, 10, 11}));
}

TEST(Transpose, InfersSymbolicDims) {
  auto out = infer_op("Transpose",
                      {typed(DType::kF32, Shape({sym("b"), sym("s"), 8, 16}))},
                      {{"perm", std::vector<int64_t>{0, 2, 1, 3}}});
  ASSERT_TRUE(out.is_ok());
  EXPECT_EQ(*out->outputs[0].shape, Shape({sym("b"), 8, sym("s"), 16}));
  auto unknown = infer_op("Transpose", {typed(DType::kF32, std::nullopt)},
                          {{"perm", std::vector<int64_t>{1, 0}}});
  ASSERT_TRUE(unknown.is_ok());
  EXPECT_EQ(unknown->outputs[0].shape->rank(), 2u);
}

TEST(Transpose, RejectsBadPerm) {
  Tensor x = iota(DType::kF32, {2, 3});
  auto repeated =
      run_op("Transpose", {x}, {{"perm", std::vector<int64_t>{0, 0}}});
  ASSERT_FALSE(repeated.is_ok());
  EXPECT_NE(repeated.status().message().find("[Transpose]"), std::string::npos);
  EXPECT_FALSE(
      run_op("Transpose", {x}, {{"perm", std::vector<int64_t>{0, 2}}}).is_ok());
  EXPECT_FALSE(
      run_op("Transpose", {x}, {{"perm", std::vector<int64_t>{0}}}).is_ok());
}

}  // namespace
}  // namespace seqrt
