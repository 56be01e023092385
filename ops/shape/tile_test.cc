#include <gtest/gtest.h>

#include "ops/op_test_util.h"

namespace seqrt {
namespace {

using op_testing::expect_error;
using op_testing::expect_values;
using op_testing::infer_types;
using op_testing::ints;
using op_testing::iota;
using op_testing::known;
using op_testing::run_ok;
using op_testing::run_op;
using op_testing::sym;
using op_testing::typed;

TEST(Tile, RepeatsEachDim) {
  Tensor x = iota(DType::kF32, {2, 2});  // [[0, 1], [2, 3]]
  Tensor y = run_ok("Tile", {x, ints({2, 3})});
  EXPECT_EQ(y.dims(), (std::vector<int64_t>{4, 6}));
  expect_values(y, {0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3,
                    0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3});
}

TEST(Tile, ZeroRepeatsAndScalars) {
  Tensor x = iota(DType::kI64, {3});
  Tensor empty = run_ok("Tile", {x, ints({0})});
  EXPECT_EQ(empty.dims(), (std::vector<int64_t>{0}));
  Tensor s = run_ok("Tile", {Tensor::scalar<int32_t>(7), ints({})});
  EXPECT_EQ(s.rank(), 0u);
  expect_values(s, {7});
  Tensor b = run_ok(
      "Tile", {Tensor::from_vector<bool>({1, 2}, {true, false}), ints({2, 1})});
  EXPECT_EQ(b.dtype(), DType::kBool);
  expect_values(b, {1, 0, 1, 0});
}

TEST(Tile, RejectsBadRepeats) {
  Tensor x = iota(DType::kF32, {2, 3});
  expect_error(run_op("Tile", {x, ints({2})}).status(),
               {"[Tile] node 'test'", "one entry per input dim"});
  expect_error(run_op("Tile", {x, ints({1, -1})}).status(),
               {"[Tile]", "negative"});
  expect_error(run_op("Tile", {x, op_testing::f32({2}, {1, 1})}).status(),
               {"[Tile]", "integer"});
  Tensor repeats = ints({2});
  expect_error(
      infer_types("Tile", {typed(DType::kF32, Shape{2, 3}), known(repeats)})
          .status(),
      {"[Tile]", "one entry"});
}

TEST(Tile, InfersFromKnownRepeats) {
  Tensor repeats = ints({2, 1, 0});
  auto out = infer_types(
      "Tile",
      {typed(DType::kF16, Shape{3, sym("t"), sym("u")}), known(repeats)});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].dtype, DType::kF16);
  EXPECT_EQ((*out)[0].shape, (Shape{6, sym("t"), 0}));
  out = infer_types(
      "Tile", {typed(DType::kF32, Shape{3, 2}), typed(DType::kI64, Shape{2})});
  ASSERT_TRUE(out.is_ok());
  EXPECT_EQ((*out)[0].shape, (Shape{Dim::unknown(), Dim::unknown()}));
}

}  // namespace
}  // namespace seqrt
