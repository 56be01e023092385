#include <gtest/gtest.h>

#include "ops/op_test_util.h"

namespace seqrt {
namespace {

using op_testing::infer_op;
using op_testing::ints;
using op_testing::iota;
using op_testing::known;
using op_testing::run_op;
using op_testing::sym;
using op_testing::typed;
using op_testing::values_of;

TEST(Reshape, AppliesMinusOneAndZeroRules) {
  Tensor x = iota(DType::kF32, {2, 3, 4});
  auto out = run_op("Reshape", {x, ints({0, -1})});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].dims(), (std::vector<int64_t>{2, 12}));
  EXPECT_EQ(values_of((*out)[0]), values_of(x));
  auto flat = run_op("Reshape", {x, ints({-1})});
  ASSERT_TRUE(flat.is_ok());
  EXPECT_EQ((*flat)[0].dims(), (std::vector<int64_t>{24}));
}

TEST(Reshape, AllowZeroMakesZeroADim) {
  Tensor empty = Tensor::allocate(DType::kF32, {0, 3}).value();
  auto out =
      run_op("Reshape", {empty, ints({3, 0})}, {{"allowzero", Attribute(1)}});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].dims(), (std::vector<int64_t>{3, 0}));
  auto both =
      run_op("Reshape", {empty, ints({0, -1})}, {{"allowzero", Attribute(1)}});
  ASSERT_FALSE(both.is_ok());
  EXPECT_NE(both.status().message().find("[Reshape]"), std::string::npos);
}

TEST(Reshape, CopiesBytesOfEveryDtype) {
  Tensor x = Tensor::from_vector<int64_t>({2, 2}, {int64_t{1} << 60, -1, 7, 9});
  auto out = run_op("Reshape", {x, ints({4})});
  ASSERT_TRUE(out.is_ok());
  EXPECT_EQ((*out)[0].data_as<int64_t>()[0], int64_t{1} << 60);
}

TEST(Reshape, RejectsBadShapes) {
  Tensor x = iota(DType::kF32, {2, 3});
  EXPECT_FALSE(run_op("Reshape", {x, ints({4, 2})}).is_ok());
  EXPECT_FALSE(run_op("Reshape", {x, ints({-1, -1})}).is_ok());
  EXPECT_FALSE(run_op("Reshape", {x, ints({-2, 3})}).is_ok());
  EXPECT_FALSE(run_op("Reshape", {x, ints({-1, 4})}).is_ok());
  EXPECT_FALSE(run_op("Reshape", {x, ints({1, 1, 0})}).is_ok());
  EXPECT_FALSE(run_op("Reshape", {x, op_testing::f32({2}, {3, 2})}).is_ok());
}

TEST(Reshape, InfersWithKnownShapeAndSymbols) {
  Tensor shape = ints({0, 0, 4, -1});
  auto heads = infer_op(
      "Reshape", {typed(DType::kF32, Shape({sym("batch"), sym("seq"), 64})),
                  known(shape)});
  ASSERT_TRUE(heads.is_ok()) << heads.status().to_string();
  EXPECT_EQ(*heads->outputs[0].shape, Shape({sym("batch"), sym("seq"), 4, 16}));
  Tensor merge = ints({-1, 64});
  auto merged =
      infer_op("Reshape",
               {typed(DType::kF32, Shape({sym("seq"), 4, 16})), known(merge)});
  ASSERT_TRUE(merged.is_ok());
  EXPECT_EQ(*merged->outputs[0].shape, Shape({sym("seq"), 64}));
  Tensor fixed = ints({3, -1});
  auto concrete =
      infer_op("Reshape", {typed(DType::kF16, Shape({2, 6})), known(fixed)});
  ASSERT_TRUE(concrete.is_ok());
  EXPECT_EQ(*concrete->outputs[0].shape, Shape({3, 4}));
  EXPECT_EQ(concrete->outputs[0].dtype, DType::kF16);
}

TEST(Reshape, InfersRankFromAnUnknownShapeValue) {
  auto out = infer_op("Reshape", {typed(DType::kF32, Shape({2, 6})),
                                  typed(DType::kI64, Shape({3}))});
  ASSERT_TRUE(out.is_ok());
  EXPECT_EQ(*out->outputs[0].shape,
            Shape({Dim::unknown(), Dim::unknown(), Dim::unknown()}));
  auto unknown = infer_op("Reshape", {typed(DType::kF32, Shape({2, 6})),
                                      typed(DType::kI64, std::nullopt)});
  ASSERT_TRUE(unknown.is_ok());
  EXPECT_FALSE(unknown->outputs[0].shape.has_value());
  Tensor bad = ints({5, -1});
  EXPECT_FALSE(
      infer_op("Reshape", {typed(DType::kF32, Shape({2, 6})), known(bad)})
          .is_ok());
}

}  // namespace
}  // namespace seqrt
