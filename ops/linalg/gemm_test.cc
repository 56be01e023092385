#include <gtest/gtest.h>

#include "ops/op_test_util.h"

namespace seqrt {
namespace {

using op_testing::f32;
using op_testing::infer_op;
using op_testing::omitted;
using op_testing::run_op;
using op_testing::sym;
using op_testing::typed;
using op_testing::values_of;

TEST(Gemm, ComputesAlphaABPlusBetaC) {
  Tensor a = f32({2, 2}, {1, 2, 3, 4});
  Tensor b = f32({2, 2}, {5, 6, 7, 8});
  Tensor c = f32({2}, {1, 2});  // broadcast over rows
  auto out = run_op("Gemm", {a, b, c},
                    {{"alpha", Attribute(2.0f)}, {"beta", Attribute(0.5f)}});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  // A*B = [[19,22],[43,50]].
  EXPECT_EQ(values_of((*out)[0]), (std::vector<double>{38.5, 45, 86.5, 101}));
}

TEST(Gemm, TransposesInputs) {
  Tensor at = f32({3, 2}, {1, 4, 2, 5, 3, 6});  // A = [[1,2,3],[4,5,6]]
  Tensor bt = f32({1, 3}, {1, 1, 1});           // B = [[1],[1],[1]]
  auto out = run_op("Gemm", {at, bt},
                    {{"transA", Attribute(1)}, {"transB", Attribute(1)}});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].dims(), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(values_of((*out)[0]), (std::vector<double>{6, 15}));
}

TEST(Gemm, ColumnAndScalarC) {
  Tensor a = f32({2, 1}, {1, 2});
  Tensor b = f32({1, 2}, {1, 1});
  auto column = run_op("Gemm", {a, b, f32({2, 1}, {10, 20})});
  ASSERT_TRUE(column.is_ok());
  EXPECT_EQ(values_of((*column)[0]), (std::vector<double>{11, 11, 22, 22}));
  auto scalar = run_op("Gemm", {a, b, Tensor::scalar<float>(1)});
  ASSERT_TRUE(scalar.is_ok());
  EXPECT_EQ(values_of((*scalar)[0]), (std::vector<double>{2, 2, 3, 3}));
}

TEST(Gemm, InfersSymbolicM) {
  auto out = infer_op(
      "Gemm",
      {typed(DType::kF32, Shape({sym("tokens"), 8})),
       typed(DType::kF32, Shape({16, 8})), typed(DType::kF32, Shape({16}))},
      {{"transB", Attribute(1)}});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ(*out->outputs[0].shape, Shape({sym("tokens"), 16}));
  auto no_c = infer_op("Gemm", {typed(DType::kF32, std::nullopt),
                                typed(DType::kF32, Shape({8, 4})), omitted()});
  ASSERT_TRUE(no_c.is_ok());
  EXPECT_EQ(*no_c->outputs[0].shape, Shape({Dim::unknown(), 4}));
}

TEST(Gemm, RejectsBadShapes) {
  auto inner =
      run_op("Gemm", {f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({2, 1}, {1, 2})});
  ASSERT_FALSE(inner.is_ok());
  EXPECT_NE(inner.status().message().find("[Gemm]"), std::string::npos);
  auto c = run_op(
      "Gemm", {f32({2, 1}, {1, 2}), f32({1, 2}, {1, 1}), f32({3}, {1, 2, 3})});
  ASSERT_FALSE(c.is_ok());
  EXPECT_NE(c.status().message().find("does not broadcast"), std::string::npos);
  EXPECT_FALSE(run_op("Gemm", {f32({2}, {1, 2}), f32({2, 1}, {1, 2})}).is_ok());
}

}  // namespace
}  // namespace seqrt
