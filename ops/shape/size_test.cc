#include <gtest/gtest.h>

#include "ops/op_test_util.h"

namespace seqrt {
namespace {

using op_testing::infer_op;
using op_testing::iota;
using op_testing::run_ok;
using op_testing::sym;
using op_testing::typed;

TEST(Size, CountsElements) {
  Tensor y = run_ok("Size", {iota(DType::kF32, {2, 3, 4})});
  EXPECT_EQ(y.dtype(), DType::kI64);
  EXPECT_EQ(y.rank(), 0u);
  EXPECT_EQ(y.element_i64(0), 24);
  EXPECT_EQ(run_ok("Size", {Tensor::scalar<bool>(true)}).element_i64(0), 1);
  Tensor empty = Tensor::allocate(DType::kI8, {3, 0}).value();
  EXPECT_EQ(run_ok("Size", {empty}).element_i64(0), 0);
}

TEST(Size, InferencePublishesFixedCounts) {
  auto fixed = infer_op("Size", {typed(DType::kF16, Shape{5, 7})});
  ASSERT_TRUE(fixed.is_ok()) << fixed.status().to_string();
  EXPECT_EQ(fixed->outputs[0].dtype, DType::kI64);
  EXPECT_EQ(fixed->outputs[0].shape, Shape());
  ASSERT_FALSE(fixed->values[0].empty());
  EXPECT_EQ(fixed->values[0].element_i64(0), 35);

  auto symbolic = infer_op("Size", {typed(DType::kF32, Shape{sym("n"), 2})});
  ASSERT_TRUE(symbolic.is_ok());
  EXPECT_EQ(symbolic->outputs[0].shape, Shape());
  EXPECT_TRUE(symbolic->values[0].empty());
}

TEST(Size, RejectsDeclaredShapesPastTheLimit) {
  int64_t big = int64_t{1} << 30;
  auto out = infer_op("Size", {typed(DType::kF32, Shape{big, big})});
  ASSERT_FALSE(out.is_ok());
  EXPECT_NE(out.status().message().find("[Size] node 'test'"),
            std::string::npos);
}

}  // namespace
}  // namespace seqrt
