// Tests of ops/util.h: axes, broadcasting and strides.
#include <gtest/gtest.h>

#include "ops/op_test_util.h"
#include "ops/util.h"

namespace seqrt {
namespace {

using op_testing::expect_error;

class UtilTest : public ::testing::Test {
 protected:
  UtilTest()
      : node_(op_testing::make_node("Add", {}, {true, true}, 1)),
        ctx_(node_, op_testing::schema_of("Add")) {}

  Node node_;
  OpContext ctx_;
};

TEST_F(UtilTest, NormalizeAxis) {
  EXPECT_EQ(normalize_axis(ctx_, -1, 3).value(), 2);
  EXPECT_EQ(normalize_axis(ctx_, 0, 3).value(), 0);
  EXPECT_EQ(normalize_axis(ctx_, -3, 3).value(), 0);
  expect_error(normalize_axis(ctx_, 3, 3).status(),
               {"[Add] node 'test'", "axis 3", "rank 3"});
  expect_error(normalize_axis(ctx_, -4, 3).status(), {"axis -4"});
}

TEST_F(UtilTest, BroadcastSymbolicShapes) {
  Shape a{Dim::symbol("batch"), 1, 4};
  Shape b{3, 1};
  Result<Shape> out = broadcast_shapes(ctx_, a, b);
  ASSERT_TRUE(out.is_ok());
  EXPECT_EQ(*out, (Shape{Dim::symbol("batch"), 3, 4}));
  // A symbol against a fixed size > 1 must be that size.
  EXPECT_EQ(broadcast_shapes(ctx_, Shape{Dim::symbol("s")}, Shape{5}).value(),
            Shape{5});
  // Two different symbols give an unknown dim.
  EXPECT_TRUE(
      broadcast_shapes(ctx_, Shape{Dim::symbol("a")}, Shape{Dim::symbol("b")})
          .value()[0]
          .is_unknown());
  expect_error(broadcast_shapes(ctx_, Shape{2, 3}, Shape{4}).status(),
               {"[Add]", "cannot be broadcast"});
}

TEST_F(UtilTest, BroadcastAllWithUnknownRank) {
  auto out = broadcast_all(ctx_, {Shape{2, 1}, std::nullopt});
  ASSERT_TRUE(out.is_ok());
  EXPECT_FALSE(out->has_value());
  out = broadcast_all(ctx_, {Shape{2, 1}, Shape{5}, Shape{}});
  ASSERT_TRUE(out.is_ok());
  EXPECT_EQ(**out, (Shape{2, 5}));
}

TEST_F(UtilTest, BroadcastDimsAndStrides) {
  EXPECT_EQ(broadcast_dims(ctx_, {2, 1, 3}, {4, 1}).value(),
            (std::vector<int64_t>{2, 4, 3}));
  expect_error(broadcast_dims(ctx_, {2}, {3}).status(),
               {"cannot be broadcast", "(2)", "(3)"});
  EXPECT_EQ(strides_of({2, 3, 4}), (std::vector<int64_t>{12, 4, 1}));
  EXPECT_EQ(strides_of({}), (std::vector<int64_t>{}));
  EXPECT_EQ(broadcast_strides({3, 1}, {2, 3, 4}),
            (std::vector<int64_t>{0, 1, 0}));
}

TEST_F(UtilTest, BroadcastIndexerMapsOutputToInputs) {
  // out (2,3) from a (2,1) and b (3).
  BroadcastIndexer indexer({2, 3}, {{2, 1}, {3}});
  std::vector<int64_t> a, b;
  for (int64_t i = 0; i < 6; ++i) {
    a.push_back(indexer.input_index(0, i));
    b.push_back(indexer.input_index(1, i));
  }
  EXPECT_EQ(a, (std::vector<int64_t>{0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(b, (std::vector<int64_t>{0, 1, 2, 0, 1, 2}));
}

TEST_F(UtilTest, TensorToInts) {
  EXPECT_EQ(tensor_to_ints(Tensor::from_vector<int32_t>({3}, {1, -2, 3})),
            (std::vector<int64_t>{1, -2, 3}));
  EXPECT_EQ(tensor_to_ints(Tensor::scalar<int64_t>(7)),
            (std::vector<int64_t>{7}));
}

}  // namespace
}  // namespace seqrt
