#include <gtest/gtest.h>

#include "ops/op_test_util.h"

namespace seqrt {
namespace {

using op_testing::f32;
using op_testing::infer_op;
using op_testing::run_op;
using op_testing::sym;
using op_testing::typed;
using op_testing::values_of;

TEST(MatMul, MultipliesMatrices) {
  auto out = run_op("MatMul", {f32({2, 3}, {1, 2, 3, 4, 5, 6}),
                               f32({3, 2}, {7, 8, 9, 10, 11, 12})});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].dims(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(values_of((*out)[0]), (std::vector<double>{58, 64, 139, 154}));
}

TEST(MatMul, PromotesVectorsAndDropsTheirDim) {
  Tensor a = f32({2}, {1, 2});
  Tensor b = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  auto vm = run_op("MatMul", {a, b});
  ASSERT_TRUE(vm.is_ok());
  EXPECT_EQ((*vm)[0].dims(), (std::vector<int64_t>{3}));
  EXPECT_EQ(values_of((*vm)[0]), (std::vector<double>{9, 12, 15}));
  auto dot = run_op("MatMul", {a, f32({2}, {3, 4})});
  ASSERT_TRUE(dot.is_ok());
  EXPECT_TRUE((*dot)[0].dims().empty());
  EXPECT_EQ(values_of((*dot)[0]), (std::vector<double>{11}));
}

TEST(MatMul, BroadcastsBatchDims) {
  // (2,1,2,2) x (3,2,1): batch (2,1) vs (3) broadcasts to (2,3).
  Tensor a = f32({2, 1, 2, 2}, {1, 0, 0, 1, 2, 0, 0, 2});
  Tensor b = f32({3, 2, 1}, {1, 2, 3, 4, 5, 6});
  auto out = run_op("MatMul", {a, b});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].dims(), (std::vector<int64_t>{2, 3, 2, 1}));
  EXPECT_EQ(values_of((*out)[0]),
            (std::vector<double>{1, 2, 3, 4, 5, 6, 2, 4, 6, 8, 10, 12}));
}

TEST(MatMul, AccumulatesHalfPrecisionInDouble) {
  Tensor a = Tensor::allocate(DType::kF16, {1, 4}).value();
  Tensor b = Tensor::allocate(DType::kF16, {4, 1}).value();
  for (int i = 0; i < 4; ++i) {
    a.set_element_f64(i, 1024.0);
    b.set_element_f64(i, 0.5);
  }
  auto out = run_op("MatMul", {a, b});
  ASSERT_TRUE(out.is_ok());
  EXPECT_EQ((*out)[0].dtype(), DType::kF16);
  EXPECT_EQ((*out)[0].element_f64(0), 2048.0);
}

TEST(MatMul, InfersSymbolicBatchAndSeq) {
  auto out = infer_op(
      "MatMul", {typed(DType::kF32, Shape({sym("batch"), sym("seq"), 64})),
                 typed(DType::kF32, Shape({64, 32}))});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ(out->outputs[0].dtype, DType::kF32);
  EXPECT_EQ(*out->outputs[0].shape, Shape({sym("batch"), sym("seq"), 32}));
}

TEST(MatMul, InfersUnknownRankAsUnknown) {
  auto out = infer_op("MatMul", {typed(DType::kF32, std::nullopt),
                                 typed(DType::kF32, Shape({4, 5}))});
  ASSERT_TRUE(out.is_ok());
  EXPECT_FALSE(out->outputs[0].shape.has_value());
}

TEST(MatMul, RejectsMismatchedInnerDims) {
  auto out = run_op(
      "MatMul", {f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({2, 2}, {1, 2, 3, 4})});
  ASSERT_FALSE(out.is_ok());
  EXPECT_NE(out.status().message().find("[MatMul]"), std::string::npos);
  EXPECT_NE(out.status().message().find("inner dims"), std::string::npos);
  auto inferred = infer_op("MatMul", {typed(DType::kF32, Shape({sym("b"), 3})),
                                      typed(DType::kF32, Shape({4, 5}))});
  EXPECT_FALSE(inferred.is_ok());
}

TEST(MatMul, RejectsMixedDtypesAndScalars) {
  Tensor i = Tensor::from_vector<int64_t>({1, 1}, {1});
  EXPECT_FALSE(run_op("MatMul", {f32({1, 1}, {1}), i}).is_ok());
  auto scalar = run_op("MatMul", {Tensor::scalar<float>(1), f32({1}, {1})});
  ASSERT_FALSE(scalar.is_ok());
  EXPECT_NE(scalar.status().message().find("rank >= 1"), std::string::npos);
}

}  // namespace
}  // namespace seqrt
