#include <gtest/gtest.h>

#include "ops/op_test_util.h"

namespace seqrt {
namespace {

using op_testing::infer_op;
using op_testing::iota;
using op_testing::run_op;
using op_testing::sym;
using op_testing::typed;

TEST(Identity, CopiesTheInput) {
  Tensor x = iota(DType::kBF16, {2, 3});
  auto out = run_op("Identity", {x});
  ASSERT_TRUE(out.is_ok());
  EXPECT_TRUE((*out)[0].same_as(x));
  EXPECT_NE((*out)[0].data(), x.data());  // a copy, not an alias
}

TEST(Identity, KeepsTheType) {
  auto out = infer_op("Identity", {typed(DType::kI8, Shape({sym("n"), 2}))});
  ASSERT_TRUE(out.is_ok());
  EXPECT_EQ(out->outputs[0].dtype, DType::kI8);
  EXPECT_EQ(*out->outputs[0].shape, Shape({sym("n"), 2}));
}

}  // namespace
}  // namespace seqrt
