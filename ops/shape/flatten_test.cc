#include <gtest/gtest.h>

#include "ops/op_test_util.h"

namespace seqrt {
namespace {

using op_testing::expect_error;
using op_testing::expect_values;
using op_testing::infer_types;
using op_testing::iota;
using op_testing::run_ok;
using op_testing::run_op;
using op_testing::sym;
using op_testing::typed;

TEST(Flatten, DefaultAxisKeepsTheFirstDim) {
  Tensor y = run_ok("Flatten", {iota(DType::kF32, {2, 3, 4})});
  EXPECT_EQ(y.dims(), (std::vector<int64_t>{2, 12}));
  EXPECT_EQ(y.element_f64(13), 13);
}

TEST(Flatten, AxisZeroRankAndNegative) {
  Tensor x = iota(DType::kI32, {2, 3, 4});
  EXPECT_EQ(run_ok("Flatten", {x}, {{"axis", 0}}).dims(),
            (std::vector<int64_t>{1, 24}));
  EXPECT_EQ(run_ok("Flatten", {x}, {{"axis", 3}}).dims(),
            (std::vector<int64_t>{24, 1}));
  Tensor y = run_ok("Flatten", {x}, {{"axis", -1}});
  EXPECT_EQ(y.dims(), (std::vector<int64_t>{6, 4}));
  EXPECT_EQ(y.dtype(), DType::kI32);
  EXPECT_EQ(y.element_i64(23), 23);
  EXPECT_EQ(run_ok("Flatten", {x}, {{"axis", -3}}).dims(),
            (std::vector<int64_t>{1, 24}));
  Tensor scalar = Tensor::scalar<float>(5);
  Tensor s = run_ok("Flatten", {scalar}, {{"axis", 0}});
  EXPECT_EQ(s.dims(), (std::vector<int64_t>{1, 1}));
  expect_values(s, {5});
}

TEST(Flatten, RejectsAxisOutOfRange) {
  Tensor x = iota(DType::kF32, {2, 3});
  expect_error(run_op("Flatten", {x}, {{"axis", 3}}).status(),
               {"[Flatten] node 'test'", "axis 3", "[-2, 2]"});
  expect_error(run_op("Flatten", {x}, {{"axis", -3}}).status(),
               {"[Flatten]", "axis -3"});
  expect_error(
      infer_types("Flatten", {typed(DType::kF32, Shape{2})}, {{"axis", 2}})
          .status(),
      {"[Flatten]", "axis 2"});
}

TEST(Flatten, InfersSymbolicDims) {
  auto out = infer_types("Flatten",
                         {typed(DType::kF16, Shape{sym("b"), 3, sym("t"), 2})},
                         {{"axis", 1}});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].dtype, DType::kF16);
  EXPECT_EQ((*out)[0].shape, (Shape{sym("b"), Dim::unknown()}));
  out = infer_types("Flatten", {typed(DType::kF32, Shape{2, 3, sym("t")})},
                    {{"axis", -1}});
  ASSERT_TRUE(out.is_ok());
  EXPECT_EQ((*out)[0].shape, (Shape{6, sym("t")}));
  out = infer_types("Flatten", {typed(DType::kF32, std::nullopt)});
  ASSERT_TRUE(out.is_ok());
  EXPECT_EQ((*out)[0].shape, (Shape{Dim::unknown(), Dim::unknown()}));
}

}  // namespace
}  // namespace seqrt
