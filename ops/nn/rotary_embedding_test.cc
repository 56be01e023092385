#include <gtest/gtest.h>

#include "ops/op_test_util.h"

namespace seqrt {
namespace {

using op_testing::expect_error;
using op_testing::expect_values;
using op_testing::f32;
using op_testing::infer_types;
using op_testing::info;
using op_testing::run_ok;
using op_testing::run_op;

// One head of 4 channels; pair 0 turns by 90 degrees, pair 1 by 0.
const Tensor kX = f32({1, 1, 4}, {1, 2, 3, 4});
const Tensor kCos = f32({1, 1, 2}, {0, 1});
const Tensor kSin = f32({1, 1, 2}, {1, 0});

TEST(RotaryEmbedding, HalvesAndInterleavedPairs) {
  // Halves: pairs (0,2) and (1,3); (x1,x2) -> (x1 c - x2 s, x1 s + x2 c).
  expect_values(run_ok("RotaryEmbedding", {kX, kCos, kSin}, {{"num_heads", 1}}),
                {-3, 2, 1, 4});
  // Interleaved: pairs (0,1) and (2,3).
  expect_values(run_ok("RotaryEmbedding", {kX, kCos, kSin},
                       {{"num_heads", 1}, {"interleaved", 1}}),
                {-2, 1, 3, 4});
}

TEST(RotaryEmbedding, PartialRotationKeepsTheRest) {
  Tensor cos = f32({1, 1, 1}, {0});
  Tensor sin = f32({1, 1, 1}, {1});
  expect_values(run_ok("RotaryEmbedding", {kX, cos, sin},
                       {{"num_heads", 1}, {"rotary_embedding_dim", 2}}),
                {-2, 1, 3, 4});
}

TEST(RotaryEmbedding, PositionIdsIndexTheCaches) {
  // Rows 0 and 1 are the identity, row 2 the 90-degree turn of pair 0.
  Tensor cos = f32({3, 2}, {1, 1, 1, 1, 0, 1});
  Tensor sin = f32({3, 2}, {0, 0, 0, 0, 1, 0});
  Tensor positions = Tensor::from_vector<int64_t>({1, 1}, {2});
  expect_values(
      run_ok("RotaryEmbedding", {kX, cos, sin, positions}, {{"num_heads", 1}}),
      {-3, 2, 1, 4});
  Tensor far = Tensor::from_vector<int64_t>({1, 1}, {3});
  expect_error(
      run_op("RotaryEmbedding", {kX, cos, sin, far}, {{"num_heads", 1}})
          .status(),
      {"[RotaryEmbedding] node 'test'", "position_ids[0,0] = 3"});
}

TEST(RotaryEmbedding, FourDimensionalLayoutIsHeadsBeforeSeq) {
  // X (batch 1, heads 2, seq 2, head 2): seq 0 keeps, seq 1 turns 90 deg.
  Tensor x = f32({1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  Tensor cos = f32({1, 2, 1}, {1, 0});
  Tensor sin = f32({1, 2, 1}, {0, 1});
  expect_values(run_ok("RotaryEmbedding", {x, cos, sin}),
                {1, 2, -4, 3, 5, 6, -8, 7});
  // The same data as (batch, seq, hidden) with 2 heads: s0 = [1,2 | 3,4].
  Tensor x3 = f32({1, 2, 4}, {1, 2, 5, 6, 3, 4, 7, 8});
  expect_values(run_ok("RotaryEmbedding", {x3, cos, sin}, {{"num_heads", 2}}),
                {1, 2, 5, 6, -4, 3, -8, 7});
}

TEST(RotaryEmbedding, Errors) {
  expect_error(run_op("RotaryEmbedding", {kX, kCos, kSin}).status(),
               {"[RotaryEmbedding] node 'test'", "num_heads is required"});
  expect_error(run_op("RotaryEmbedding", {kX, kCos, kSin},
                      {{"num_heads", 1}, {"rotary_embedding_dim", 3}})
                   .status(),
               {"[RotaryEmbedding]", "rotary_embedding_dim 3"});
  expect_error(
      run_op("RotaryEmbedding", {kX, kCos, kSin}, {{"num_heads", 3}}).status(),
      {"[RotaryEmbedding]", "not a multiple of num_heads 3"});
  Tensor short_cache = f32({1, 1, 1}, {1});
  expect_error(run_op("RotaryEmbedding", {kX, short_cache, short_cache},
                      {{"num_heads", 1}})
                   .status(),
               {"[RotaryEmbedding]", "caches must be"});
  Tensor positions = Tensor::from_vector<int32_t>({1, 1}, {0});
  expect_error(run_op("RotaryEmbedding",
                      {kX, f32({1, 2}, {1, 1}), f32({1, 2}, {0, 0}), positions},
                      {{"num_heads", 1}})
                   .status(),
               {"[RotaryEmbedding]", "position_ids' must be i64"});
  expect_error(
      run_op("RotaryEmbedding", {f32({4}, {1, 2, 3, 4}), kCos, kSin}).status(),
      {"[RotaryEmbedding]", "input 'X' must be"});
}

TEST(RotaryEmbedding, Inference) {
  Shape x{Dim::symbol("batch"), 8, Dim::symbol("seq"), 64};
  auto out = infer_types(
      "RotaryEmbedding",
      {info(DType::kF16, x), info(DType::kF16, Shape{4096, 32}),
       info(DType::kF16, Shape{4096, 32}),
       info(DType::kI64, Shape{Dim::symbol("batch"), Dim::symbol("seq")})});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].dtype, DType::kF16);
  EXPECT_EQ((*out)[0].shape, x);
  expect_error(
      infer_types(
          "RotaryEmbedding",
          {info(DType::kF16, x), info(DType::kF16, Shape{4096, 16}),
           info(DType::kF16, Shape{4096, 16}),
           info(DType::kI64, Shape{Dim::symbol("batch"), Dim::symbol("seq")})})
          .status(),
      {"[RotaryEmbedding]", "rotary_dim / 2 = 32"});
  expect_error(
      infer_types("RotaryEmbedding", {info(DType::kF32, Shape{2, 5, 64}),
                                      info(DType::kF32, Shape{2, 5, 32}),
                                      info(DType::kF32, Shape{2, 5, 32})})
          .status(),
      {"[RotaryEmbedding]", "num_heads is required"});
}

}  // namespace
}  // namespace seqrt
