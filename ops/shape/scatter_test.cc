// ScatterND and ScatterElements: hand-computed values for each reduction,
// negative and duplicate indices, and the shape and range errors.
#include <gtest/gtest.h>

#include "ops/op_test_util.h"

namespace seqrt {
namespace {

using op_testing::expect_error;
using op_testing::f32;
using op_testing::i64;
using op_testing::infer_op;
using op_testing::run_op;
using op_testing::typed;
using op_testing::values_of;

std::vector<double> scatter(const char* op, std::vector<Tensor> inputs,
                            AttrMap attrs = {}) {
  auto out = run_op(op, std::move(inputs), std::move(attrs));
  EXPECT_TRUE(out.is_ok()) << out.status().to_string();
  return out.is_ok() ? values_of((*out)[0]) : std::vector<double>{};
}

TEST(ScatterND, ReplacesSlicesAndElements) {
  Tensor data = f32({3, 2}, {1, 2, 3, 4, 5, 6});
  // Row slices: k = 1 < rank, rows -1 (the last) and 0.
  EXPECT_EQ(scatter("ScatterND",
                    {data, i64({2, 1}, {-1, 0}), f32({2, 2}, {7, 8, 9, 10})}),
            (std::vector<double>{9, 10, 3, 4, 7, 8}));
  // Single elements: k = rank; a duplicate index keeps the last update.
  EXPECT_EQ(scatter("ScatterND", {data, i64({3, 2}, {1, 1, 0, 0, 1, 1}),
                                  f32({3}, {20, 30, 40})}),
            (std::vector<double>{30, 2, 3, 40, 5, 6}));
}

TEST(ScatterND, Reductions) {
  Tensor data = f32({4}, {1, 2, 3, 4});
  Tensor indices = i64({3, 1}, {0, 2, 0});
  Tensor updates = f32({3}, {5, 10, 0.5f});
  EXPECT_EQ(scatter("ScatterND", {data, indices, updates},
                    {{"reduction", Attribute(std::string("add"))}}),
            (std::vector<double>{6.5, 2, 13, 4}));
  EXPECT_EQ(scatter("ScatterND", {data, indices, updates},
                    {{"reduction", Attribute(std::string("mul"))}}),
            (std::vector<double>{2.5, 2, 30, 4}));
  EXPECT_EQ(scatter("ScatterND", {data, indices, updates},
                    {{"reduction", Attribute(std::string("max"))}}),
            (std::vector<double>{5, 2, 10, 4}));
  EXPECT_EQ(scatter("ScatterND", {data, indices, updates},
                    {{"reduction", Attribute(std::string("min"))}}),
            (std::vector<double>{0.5, 2, 3, 4}));
}

TEST(ScatterND, RejectsBadShapesAndIndices) {
  Tensor data = f32({3, 2}, {1, 2, 3, 4, 5, 6});
  expect_error(
      run_op("ScatterND", {data, i64({1, 1}, {3}), f32({1, 2}, {0, 0})})
          .status(),
      {"[ScatterND]", "index 3 is out of range [-3, 2]"});
  expect_error(
      run_op("ScatterND", {data, i64({1, 1}, {0}), f32({1, 3}, {0, 0, 0})})
          .status(),
      {"updates (1,3) must have shape (1,2)"});
  expect_error(
      run_op("ScatterND", {data, i64({1, 3}, {0, 0, 0}), f32({1}, {0})})
          .status(),
      {"last dim 3 must be in [1, 2]"});
  expect_error(
      run_op("ScatterND", {data, i64({1, 1}, {0}), f32({1, 2}, {0, 0})},
             {{"reduction", Attribute(std::string("avg"))}})
          .status(),
      {"reduction 'avg'"});
}

TEST(ScatterElements, ReplacesAndReducesAlongAxis) {
  Tensor data = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor indices = i64({2, 2}, {2, -3, 0, 0});
  Tensor updates = f32({2, 2}, {10, 20, 30, 40});
  EXPECT_EQ(scatter("ScatterElements", {data, indices, updates},
                    {{"axis", Attribute(1)}}),
            (std::vector<double>{20, 2, 10, 40, 5, 6}));
  EXPECT_EQ(scatter("ScatterElements", {data, indices, updates},
                    {{"axis", Attribute(1)},
                     {"reduction", Attribute(std::string("add"))}}),
            (std::vector<double>{21, 2, 13, 74, 5, 6}));
  // axis 0: row indices.
  EXPECT_EQ(scatter("ScatterElements",
                    {data, i64({1, 3}, {1, 0, 1}), f32({1, 3}, {7, 8, 9})}),
            (std::vector<double>{1, 8, 3, 7, 5, 9}));
}

TEST(ScatterElements, RejectsBadShapesAndIndices) {
  Tensor data = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  expect_error(
      run_op("ScatterElements", {data, i64({1, 1}, {3}), f32({1, 1}, {0})},
             {{"axis", Attribute(1)}})
          .status(),
      {"[ScatterElements]", "out of range"});
  expect_error(
      run_op("ScatterElements", {data, i64({1, 1}, {0}), f32({1, 2}, {0, 0})})
          .status(),
      {"do not fit data"});
  expect_error(run_op("ScatterElements",
                      {data, i64({3, 1}, {0, 0, 0}), f32({3, 1}, {0, 0, 0})},
                      {{"axis", Attribute(1)}})
                   .status(),
               {"do not fit data"});
}

TEST(Scatter, InfersDataShape) {
  auto nd = infer_op("ScatterND", {typed(DType::kF32, Shape({4, 5})),
                                   typed(DType::kI64, Shape({2, 1})),
                                   typed(DType::kF32, Shape({2, 5}))});
  ASSERT_TRUE(nd.is_ok()) << nd.status().to_string();
  EXPECT_EQ(*nd->outputs[0].shape, Shape({4, 5}));
  EXPECT_FALSE(infer_op("ScatterND", {typed(DType::kF32, Shape({4, 5})),
                                      typed(DType::kF32, Shape({2, 1})),
                                      typed(DType::kF32, Shape({2, 5}))})
                   .is_ok());
  EXPECT_FALSE(infer_op("ScatterElements", {typed(DType::kF32, Shape({4, 5})),
                                            typed(DType::kI64, Shape({4})),
                                            typed(DType::kF32, Shape({4}))})
                   .is_ok());
}

}  // namespace
}  // namespace seqrt
