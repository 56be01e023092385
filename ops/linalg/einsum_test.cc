#include <gtest/gtest.h>

#include "ops/op_test_util.h"

namespace seqrt {
namespace {

using op_testing::f32;
using op_testing::infer_op;
using op_testing::iota;
using op_testing::run_op;
using op_testing::sym;
using op_testing::typed;
using op_testing::values_of;

AttrMap equation(const char* text) { return {{"equation", Attribute(text)}}; }

TEST(Einsum, MatrixProduct) {
  auto out = run_op(
      "Einsum",
      {f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({3, 2}, {7, 8, 9, 10, 11, 12})},
      equation("ij,jk->ik"));
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ(values_of((*out)[0]), (std::vector<double>{58, 64, 139, 154}));
}

TEST(Einsum, ImplicitOutputIsSortedSingleLetters) {
  // "ba" has no output: letters used once, sorted -> "ab", a transpose.
  auto out =
      run_op("Einsum", {f32({2, 3}, {1, 2, 3, 4, 5, 6})}, equation("ba"));
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].dims(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(values_of((*out)[0]), (std::vector<double>{1, 4, 2, 5, 3, 6}));
}

TEST(Einsum, RepeatedLetterTakesTheDiagonal) {
  Tensor m = f32({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  auto trace = run_op("Einsum", {m}, equation("ii"));
  ASSERT_TRUE(trace.is_ok()) << trace.status().to_string();
  EXPECT_TRUE((*trace)[0].dims().empty());
  EXPECT_EQ(values_of((*trace)[0]), (std::vector<double>{15}));
  auto diagonal = run_op("Einsum", {m}, equation("ii->i"));
  ASSERT_TRUE(diagonal.is_ok());
  EXPECT_EQ(values_of((*diagonal)[0]), (std::vector<double>{1, 5, 9}));
}

TEST(Einsum, SumsAndOuterProducts) {
  auto sum = run_op("Einsum", {f32({2, 2}, {1, 2, 3, 4})}, equation("ij->"));
  ASSERT_TRUE(sum.is_ok());
  EXPECT_EQ(values_of((*sum)[0]), (std::vector<double>{10}));
  auto outer = run_op("Einsum", {f32({2}, {1, 2}), f32({3}, {1, 10, 100})},
                      equation("i,j->ij"));
  ASSERT_TRUE(outer.is_ok());
  EXPECT_EQ(values_of((*outer)[0]),
            (std::vector<double>{1, 10, 100, 2, 20, 200}));
}

TEST(Einsum, EllipsisBroadcastsBatchDims) {
  // (2,1,2) and (3,2): "...j,jk->...k"; the ellipsis dims (2,1) and () give
  // (2,1) batch dims.
  Tensor a = iota(DType::kF32, {2, 1, 2});
  Tensor b = f32({2, 2}, {1, 0, 0, 1});
  auto out = run_op("Einsum", {a, b}, equation("...j,jk->...k"));
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].dims(), (std::vector<int64_t>{2, 1, 2}));
  EXPECT_EQ(values_of((*out)[0]), (std::vector<double>{0, 1, 2, 3}));
  // Batched matmul with broadcasting of a size-1 ellipsis dim.
  Tensor x = iota(DType::kF64, {1, 2, 2});
  Tensor y = iota(DType::kF64, {3, 2, 1});
  auto bmm = run_op("Einsum", {x, y}, equation("...ij,...jk->...ik"));
  ASSERT_TRUE(bmm.is_ok()) << bmm.status().to_string();
  EXPECT_EQ((*bmm)[0].dims(), (std::vector<int64_t>{3, 2, 1}));
  // x = [[0,1],[2,3]], y[b] = [[2b],[2b+1]].
  EXPECT_EQ(values_of((*bmm)[0]), (std::vector<double>{1, 3, 3, 13, 5, 23}));
}

TEST(Einsum, InfersSymbolicDims) {
  auto out = infer_op("Einsum",
                      {typed(DType::kF32, Shape({sym("batch"), sym("seq"), 8})),
                       typed(DType::kF32, Shape({sym("batch"), 8, 4}))},
                      equation("bsd,bde->bse"));
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ(*out->outputs[0].shape, Shape({sym("batch"), sym("seq"), 4}));
  auto ellipsis = infer_op("Einsum",
                           {typed(DType::kF32, Shape({sym("n"), 1, 5})),
                            typed(DType::kF32, Shape({7, 5}))},
                           equation("...d,...d->..."));
  ASSERT_TRUE(ellipsis.is_ok()) << ellipsis.status().to_string();
  EXPECT_EQ(*ellipsis->outputs[0].shape, Shape({sym("n"), 7}));
}

TEST(Einsum, RejectsBadEquations) {
  Tensor m = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  auto rank = run_op("Einsum", {m}, equation("ijk->i"));
  ASSERT_FALSE(rank.is_ok());
  EXPECT_NE(rank.status().message().find("[Einsum]"), std::string::npos);
  EXPECT_FALSE(run_op("Einsum", {m}, equation("ij->k")).is_ok());
  EXPECT_FALSE(run_op("Einsum", {m}, equation("ij->ii")).is_ok());
  EXPECT_FALSE(run_op("Einsum", {m}, equation("i1->i")).is_ok());
  EXPECT_FALSE(run_op("Einsum", {m, m}, equation("ij->i")).is_ok());
  auto sizes = run_op("Einsum", {m, m}, equation("ij,jk->ik"));
  ASSERT_FALSE(sizes.is_ok());
  EXPECT_NE(sizes.status().message().find("label 'j'"), std::string::npos);
  EXPECT_FALSE(run_op("Einsum", {m}, equation("ii")).is_ok());
}

}  // namespace
}  // namespace seqrt
