#include <gtest/gtest.h>

#include "ops/op_test_util.h"

namespace seqrt {
namespace {

using op_testing::infer_op;
using op_testing::ints;
using op_testing::iota;
using op_testing::known;
using op_testing::omitted;
using op_testing::run_op;
using op_testing::sym;
using op_testing::typed;
using op_testing::values_of;

TEST(Split, UsesTheSplitInput) {
  auto out = run_op("Split", {iota(DType::kF32, {2, 5}), ints({2, 3})},
                    {{"axis", Attribute(-1)}}, 2);
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].dims(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(values_of((*out)[0]), (std::vector<double>{0, 1, 5, 6}));
  EXPECT_EQ(values_of((*out)[1]), (std::vector<double>{2, 3, 4, 7, 8, 9}));
}

TEST(Split, NumOutputsMakesTheLastChunkSmaller) {
  auto out = run_op("Split", {iota(DType::kI32, {7})},
                    {{"num_outputs", Attribute(3)}}, 3);
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ(values_of((*out)[0]), (std::vector<double>{0, 1, 2}));
  EXPECT_EQ(values_of((*out)[1]), (std::vector<double>{3, 4, 5}));
  EXPECT_EQ(values_of((*out)[2]), (std::vector<double>{6}));
}

TEST(Split, WithoutSizesSplitsEvenly) {
  auto out = run_op("Split", {iota(DType::kF32, {4, 2})}, {}, 2);
  ASSERT_TRUE(out.is_ok());
  EXPECT_EQ(values_of((*out)[1]), (std::vector<double>{4, 5, 6, 7}));
  EXPECT_FALSE(run_op("Split", {iota(DType::kF32, {5})}, {}, 2).is_ok());
}

TEST(Split, RejectsBadSizes) {
  Tensor x = iota(DType::kF32, {5});
  auto sum = run_op("Split", {x, ints({2, 2})}, {}, 2);
  ASSERT_FALSE(sum.is_ok());
  EXPECT_NE(sum.status().message().find("[Split]"), std::string::npos);
  EXPECT_FALSE(run_op("Split", {x, ints({6, -1})}, {}, 2).is_ok());
  EXPECT_FALSE(run_op("Split", {x, ints({5})}, {}, 2).is_ok());
  EXPECT_FALSE(
      run_op("Split", {x, ints({2, 3})}, {{"num_outputs", Attribute(2)}}, 2)
          .is_ok());
  EXPECT_FALSE(
      run_op("Split", {x}, {{"num_outputs", Attribute(3)}}, 2).is_ok());
  EXPECT_FALSE(
      run_op("Split", {x}, {{"num_outputs", Attribute(4)}}, 4).is_ok());
}

TEST(Split, InfersSizes) {
  Tensor sizes = ints({16, 48});
  auto out = infer_op(
      "Split", {typed(DType::kF32, Shape({sym("seq"), 64})), known(sizes)},
      {{"axis", Attribute(1)}}, 2);
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ(*out->outputs[0].shape, Shape({sym("seq"), 16}));
  EXPECT_EQ(*out->outputs[1].shape, Shape({sym("seq"), 48}));
  auto symbolic = infer_op(
      "Split", {typed(DType::kF32, Shape({sym("seq"), 64})), omitted()},
      {{"num_outputs", Attribute(2)}}, 2);
  ASSERT_TRUE(symbolic.is_ok());
  EXPECT_EQ(*symbolic->outputs[1].shape, Shape({Dim::unknown(), 64}));
  auto unknown_split = infer_op(
      "Split",
      {typed(DType::kF32, Shape({10, 4})), typed(DType::kI64, Shape({2}))}, {},
      2);
  ASSERT_TRUE(unknown_split.is_ok());
  EXPECT_EQ(*unknown_split->outputs[0].shape, Shape({Dim::unknown(), 4}));
}

}  // namespace
}  // namespace seqrt
