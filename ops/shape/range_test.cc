#include <gtest/gtest.h>

#include <limits>

#include "ops/op_test_util.h"

namespace seqrt {
namespace {

using op_testing::infer_op;
using op_testing::known;
using op_testing::run_op;
using op_testing::typed;
using op_testing::values_of;

template <typename T>
std::vector<Tensor> args(T start, T limit, T delta) {
  return {Tensor::scalar<T>(start), Tensor::scalar<T>(limit),
          Tensor::scalar<T>(delta)};
}

TEST(Range, CountsUpAndDown) {
  auto up = run_op("Range", args<int64_t>(1, 10, 3));
  ASSERT_TRUE(up.is_ok()) << up.status().to_string();
  EXPECT_EQ(values_of((*up)[0]), (std::vector<double>{1, 4, 7}));
  auto down = run_op("Range", args<int32_t>(10, 4, -3));
  ASSERT_TRUE(down.is_ok());
  EXPECT_EQ((*down)[0].dtype(), DType::kI32);
  EXPECT_EQ(values_of((*down)[0]), (std::vector<double>{10, 7}));
  auto floats = run_op("Range", args<float>(0.0f, 1.0f, 0.25f));
  ASSERT_TRUE(floats.is_ok());
  EXPECT_EQ(values_of((*floats)[0]), (std::vector<double>{0, 0.25, 0.5, 0.75}));
  auto empty = run_op("Range", args<int64_t>(5, 1, 1));
  ASSERT_TRUE(empty.is_ok());
  EXPECT_EQ((*empty)[0].dims(), (std::vector<int64_t>{0}));
}

TEST(Range, HandlesExtremeIntegers) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  auto out = run_op("Range", args<int64_t>(kMin, kMax, int64_t{1} << 62));
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].num_elements(), 4);
  EXPECT_EQ((*out)[0].data_as<int64_t>()[3],
            int64_t{1} << 62);  // -2^63 + 3 * 2^62
  EXPECT_FALSE(run_op("Range", args<int64_t>(kMin, kMax, 1)).is_ok());
}

TEST(Range, RejectsBadInputs) {
  auto zero = run_op("Range", args<int64_t>(0, 5, 0));
  ASSERT_FALSE(zero.is_ok());
  EXPECT_NE(zero.status().message().find("[Range]"), std::string::npos);
  EXPECT_FALSE(
      run_op("Range", {Tensor::scalar<int64_t>(0), Tensor::scalar<float>(5),
                       Tensor::scalar<int64_t>(1)})
          .is_ok());
  EXPECT_FALSE(
      run_op("Range", args<float>(0, std::numeric_limits<float>::infinity(), 1))
          .is_ok());
  EXPECT_FALSE(
      run_op("Range", {op_testing::i64({2}, {0, 1}), Tensor::scalar<int64_t>(5),
                       Tensor::scalar<int64_t>(1)})
          .is_ok());
}

TEST(Range, InfersLengthFromKnownValues) {
  std::vector<Tensor> values = args<int64_t>(0, 7, 2);
  auto out =
      infer_op("Range", {known(values[0]), known(values[1]), known(values[2])});
  ASSERT_TRUE(out.is_ok());
  EXPECT_EQ(*out->outputs[0].shape, Shape({4}));
  auto unknown = infer_op("Range", {typed(DType::kI64, Shape()),
                                    known(values[1]), known(values[2])});
  ASSERT_TRUE(unknown.is_ok());
  EXPECT_EQ(*unknown->outputs[0].shape, Shape({Dim::unknown()}));
}

}  // namespace
}  // namespace seqrt
