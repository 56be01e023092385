#include <gtest/gtest.h>

#include "ops/op_test_util.h"

namespace seqrt {
namespace {

using op_testing::f32;
using op_testing::infer_op;
using op_testing::ints;
using op_testing::known;
using op_testing::omitted;
using op_testing::run_op;
using op_testing::sym;
using op_testing::typed;
using op_testing::values_of;

AttrMap mode(const char* name) { return {{"mode", Attribute(name)}}; }

TEST(Pad, ConstantWithValue) {
  Tensor x = f32({2, 2}, {1, 2, 3, 4});
  auto out = run_op("Pad", {x, ints({0, 1, 1, 0}), Tensor::scalar<float>(9)});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].dims(), (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(values_of((*out)[0]),
            (std::vector<double>{9, 1, 2, 9, 3, 4, 9, 9, 9}));
}

TEST(Pad, ReflectEdgeAndWrap) {
  Tensor x = f32({1, 3}, {1, 2, 3});
  Tensor pads = ints({0, 2, 0, 2});
  auto reflect = run_op("Pad", {x, pads}, mode("reflect"));
  auto edge = run_op("Pad", {x, pads}, mode("edge"));
  auto wrap = run_op("Pad", {x, pads}, mode("wrap"));
  ASSERT_TRUE(reflect.is_ok() && edge.is_ok() && wrap.is_ok());
  EXPECT_EQ(values_of((*reflect)[0]),
            (std::vector<double>{3, 2, 1, 2, 3, 2, 1}));
  EXPECT_EQ(values_of((*edge)[0]), (std::vector<double>{1, 1, 1, 2, 3, 3, 3}));
  EXPECT_EQ(values_of((*wrap)[0]), (std::vector<double>{2, 3, 1, 2, 3, 1, 2}));
}

TEST(Pad, AxesAndNegativePadsCrop) {
  Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  auto out = run_op("Pad", {x, ints({-1, 1}), Tensor(), ints({-1})});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].dims(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(values_of((*out)[0]), (std::vector<double>{2, 3, 0, 5, 6, 0}));
}

TEST(Pad, RejectsBadPads) {
  Tensor x = f32({2, 2}, {1, 2, 3, 4});
  auto count = run_op("Pad", {x, ints({1, 1})});
  ASSERT_FALSE(count.is_ok());
  EXPECT_NE(count.status().message().find("[Pad]"), std::string::npos);
  EXPECT_FALSE(run_op("Pad", {x, ints({-3, 0, 0, 0})}).is_ok());
  EXPECT_FALSE(run_op("Pad", {x, ints({0, 0}), Tensor(), ints({2})}).is_ok());
  EXPECT_FALSE(run_op("Pad", {x, ints({0, 0, 0, 0}), Tensor::scalar<double>(1)})
                   .is_ok());
  Tensor empty = Tensor::allocate(DType::kF32, {0}).value();
  EXPECT_FALSE(run_op("Pad", {empty, ints({1, 0})}, mode("edge")).is_ok());
  EXPECT_FALSE(
      run_op("Pad", {x, ints({0, 0, 0, 0})}, mode("symmetric")).is_ok());
}

TEST(Pad, InfersShapes) {
  Tensor pads = ints({0, 2, 0, 1});
  auto out =
      infer_op("Pad", {typed(DType::kF32, Shape({sym("s"), 4})), known(pads)});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ(*out->outputs[0].shape, Shape({sym("s"), 7}));
  auto unknown = infer_op("Pad", {typed(DType::kF32, Shape({3, 4})),
                                  typed(DType::kI64, Shape({4}))});
  ASSERT_TRUE(unknown.is_ok());
  EXPECT_EQ(unknown->outputs[0].shape->rank(), 2u);
}

}  // namespace
}  // namespace seqrt
