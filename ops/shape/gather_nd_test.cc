// GatherND: hand-computed values for slices and elements, batch_dims,
// negative and int32 indices, inference with symbolic dims, and the errors
// (index out of range, batch_dims too large, mismatched batch dims).
#include <gtest/gtest.h>

#include "ops/op_test_util.h"

namespace seqrt {
namespace {

using op_testing::expect_error;
using op_testing::f32;
using op_testing::i64;
using op_testing::infer_op;
using op_testing::iota;
using op_testing::run_ok;
using op_testing::run_op;
using op_testing::sym;
using op_testing::typed;
using op_testing::values_of;

TEST(GatherND, ElementsAndSlices) {
  Tensor data = iota(DType::kF32, {2, 3});  // [[0,1,2],[3,4,5]]
  // k = rank: single elements; -1 counts from the back.
  Tensor elements =
      run_ok("GatherND", {data, i64({3, 2}, {1, 2, 0, -1, -2, 0})});
  EXPECT_EQ(elements.dims(), (std::vector<int64_t>{3}));
  EXPECT_EQ(values_of(elements), (std::vector<double>{5, 2, 0}));
  // k = 1: rows, with indices of rank 3.
  Tensor rows = run_ok("GatherND", {data, i64({1, 2, 1}, {1, 0})});
  EXPECT_EQ(rows.dims(), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(values_of(rows), (std::vector<double>{3, 4, 5, 0, 1, 2}));
}

TEST(GatherND, BatchDimsIndexEachBatchEntry) {
  Tensor data = iota(DType::kI64, {2, 2, 3});
  // batch_dims 1: entry b takes row indices[b] of data[b].
  Tensor rows = run_ok("GatherND", {data, i64({2, 1}, {1, 0})},
                       {{"batch_dims", Attribute(1)}});
  EXPECT_EQ(rows.dims(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(values_of(rows), (std::vector<double>{3, 4, 5, 6, 7, 8}));
  // batch_dims 2 with k = 1 and two tuples per batch entry (the mask
  // indexing of transformers' dynamo exports has this form).
  Tensor picks =
      run_ok("GatherND", {data, i64({2, 2, 2, 1}, {0, 2, 1, 1, 2, 2, 0, -3})},
             {{"batch_dims", Attribute(2)}});
  EXPECT_EQ(picks.dims(), (std::vector<int64_t>{2, 2, 2}));
  EXPECT_EQ(values_of(picks), (std::vector<double>{0, 2, 4, 4, 8, 8, 9, 9}));
}

TEST(GatherND, Int32IndicesAndBoolData) {
  Tensor data = Tensor::from_vector<bool>({2, 2}, {true, false, false, true});
  Tensor indices = Tensor::from_vector<int32_t>({2, 2}, {0, 1, 1, 1});
  Tensor out = run_ok("GatherND", {data, indices});
  EXPECT_EQ(out.dtype(), DType::kBool);
  EXPECT_EQ(values_of(out), (std::vector<double>{0, 1}));
}

TEST(GatherND, RejectsBadIndicesAndBatchDims) {
  Tensor data = f32({3, 2}, {1, 2, 3, 4, 5, 6});
  expect_error(run_op("GatherND", {data, i64({1, 1}, {3})}).status(),
               {"[GatherND]", "index 3 is out of range [-3, 2] for dim 0"});
  expect_error(run_op("GatherND", {data, i64({1, 2}, {0, -3})}).status(),
               {"index -3 is out of range [-2, 1] for dim 1"});
  expect_error(run_op("GatherND", {data, i64({3, 1}, {0, 1, 2})},
                      {{"batch_dims", Attribute(2)}})
                   .status(),
               {"batch_dims 2 must be in [0, 2)"});
  expect_error(run_op("GatherND", {data, i64({2, 1}, {0, 1})},
                      {{"batch_dims", Attribute(1)}})
                   .status(),
               {"batch dim 0 of data (3,2) and indices (2,1) differ"});
  expect_error(run_op("GatherND", {data, i64({1, 3}, {0, 0, 0})}).status(),
               {"last dim 3 must be in [1, 2]"});
  expect_error(run_op("GatherND", {data, f32({1, 1}, {0})}).status(),
               {"indices must be int64 or int32"});
}

TEST(GatherND, InfersShapes) {
  auto out = infer_op("GatherND",
                      {typed(DType::kF32, Shape({sym("b"), 7, 5})),
                       typed(DType::kI64, Shape({sym("b"), 4, 1}))},
                      {{"batch_dims", Attribute(1)}});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ(out->outputs[0].dtype, DType::kF32);
  EXPECT_EQ(*out->outputs[0].shape, Shape({sym("b"), 4, 5}));
  // An unknown last dim leaves the rank unknown.
  auto unknown =
      infer_op("GatherND", {typed(DType::kF32, Shape({7, 5})),
                            typed(DType::kI64, Shape({4, sym("k")}))});
  ASSERT_TRUE(unknown.is_ok());
  EXPECT_FALSE(unknown->outputs[0].shape.has_value());
  EXPECT_FALSE(infer_op("GatherND", {typed(DType::kF32, Shape({7, 5})),
                                     typed(DType::kI64, Shape({4, 3}))})
                   .is_ok());
  EXPECT_FALSE(infer_op("GatherND",
                        {typed(DType::kF32, Shape({7, 5})),
                         typed(DType::kI64, Shape({7, 1}))},
                        {{"batch_dims", Attribute(2)}})
                   .is_ok());
}

}  // namespace
}  // namespace seqrt
