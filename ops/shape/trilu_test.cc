#include <gtest/gtest.h>

#include "ops/op_test_util.h"

namespace seqrt {
namespace {

using op_testing::infer_op;
using op_testing::iota;
using op_testing::run_op;
using op_testing::typed;
using op_testing::values_of;

TEST(Trilu, UpperAndLowerWithK) {
  Tensor x = iota(DType::kF32, {3, 3});
  for (int i = 0; i < 9; ++i) x.set_element_f64(i, i + 1);
  auto upper = run_op("Trilu", {x});
  ASSERT_TRUE(upper.is_ok()) << upper.status().to_string();
  EXPECT_EQ(values_of((*upper)[0]),
            (std::vector<double>{1, 2, 3, 0, 5, 6, 0, 0, 9}));
  auto lower = run_op("Trilu", {x, Tensor::scalar<int64_t>(-1)},
                      {{"upper", Attribute(0)}});
  ASSERT_TRUE(lower.is_ok());
  EXPECT_EQ(values_of((*lower)[0]),
            (std::vector<double>{0, 0, 0, 4, 0, 0, 7, 8, 0}));
  auto shifted = run_op("Trilu", {x, Tensor::scalar<int64_t>(1)});
  ASSERT_TRUE(shifted.is_ok());
  EXPECT_EQ(values_of((*shifted)[0]),
            (std::vector<double>{0, 2, 3, 0, 0, 6, 0, 0, 0}));
}

TEST(Trilu, AppliesToEveryBatchMatrix) {
  Tensor x = iota(DType::kI64, {2, 2, 3});
  auto out = run_op("Trilu", {x}, {{"upper", Attribute(0)}});
  ASSERT_TRUE(out.is_ok());
  EXPECT_EQ(values_of((*out)[0]),
            (std::vector<double>{0, 0, 0, 3, 4, 0, 6, 0, 0, 9, 10, 0}));
}

TEST(Trilu, RejectsBadInputs) {
  auto rank = run_op("Trilu", {iota(DType::kF32, {3})});
  ASSERT_FALSE(rank.is_ok());
  EXPECT_NE(rank.status().message().find("[Trilu]"), std::string::npos);
  EXPECT_FALSE(
      run_op("Trilu", {iota(DType::kF32, {2, 2}), Tensor::scalar<float>(1)})
          .is_ok());
  EXPECT_FALSE(infer_op("Trilu", {typed(DType::kF32, Shape({4}))}).is_ok());
}

}  // namespace
}  // namespace seqrt
