// IsNaN and IsInf: NaN, both infinities, finite values and zeros in every
// float dtype; IsInf's sign filters; integers refused.
#include <gtest/gtest.h>

#include <limits>

#include "ops/op_test_util.h"

namespace seqrt {
namespace {

using op_testing::expect_error;
using op_testing::infer_op;
using op_testing::run_ok;
using op_testing::run_op;
using op_testing::typed;
using op_testing::values_of;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

Tensor specials(DType dtype) {
  Tensor t = Tensor::allocate(dtype, {6}).value();
  const double values[] = {1.5, -kInf, kNaN, kInf, -0.0, -2.0};
  for (int64_t i = 0; i < 6; ++i) t.set_element_f64(i, values[i]);
  return t;
}

TEST(FloatClass, EveryFloatDtype) {
  for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16, DType::kF64}) {
    SCOPED_TRACE(dtype_name(dtype));
    Tensor nan = run_ok("IsNaN", {specials(dtype)});
    EXPECT_EQ(nan.dtype(), DType::kBool);
    EXPECT_EQ(values_of(nan), (std::vector<double>{0, 0, 1, 0, 0, 0}));
    EXPECT_EQ(values_of(run_ok("IsInf", {specials(dtype)})),
              (std::vector<double>{0, 1, 0, 1, 0, 0}));
  }
}

TEST(FloatClass, IsInfSignFilters) {
  Tensor x = specials(DType::kF32);
  EXPECT_EQ(
      values_of(run_ok("IsInf", {x}, {{"detect_negative", Attribute(0)}})),
      (std::vector<double>{0, 0, 0, 1, 0, 0}));
  EXPECT_EQ(
      values_of(run_ok("IsInf", {x}, {{"detect_positive", Attribute(0)}})),
      (std::vector<double>{0, 1, 0, 0, 0, 0}));
  EXPECT_EQ(values_of(run_ok("IsInf", {x},
                             {{"detect_negative", Attribute(0)},
                              {"detect_positive", Attribute(0)}})),
            (std::vector<double>(6, 0)));
}

TEST(FloatClass, RefusesIntegersAndInfersBool) {
  expect_error(
      run_op("IsNaN", {Tensor::from_vector<int64_t>({1}, {1})}).status(),
      {"[IsNaN]", "input 'X'"});
  auto out = infer_op("IsInf", {typed(DType::kF16, Shape({2, 3}))});
  ASSERT_TRUE(out.is_ok());
  EXPECT_EQ(out->outputs[0].dtype, DType::kBool);
  EXPECT_EQ(*out->outputs[0].shape, Shape({2, 3}));
}

}  // namespace
}  // namespace seqrt
