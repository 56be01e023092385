#include "tests/onnx_node/tensor_compare.h"

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

namespace seqrt::onnx_node {
namespace {

TEST(TensorCompareTest, EqualFloatsMatch) {
  Tensor a = Tensor::from_vector<float>({2}, {1.0f, -2.5f});
  EXPECT_FALSE(compare_tensors(a, a.clone()).has_value());
}

TEST(TensorCompareTest, F32WithinToleranceMatches) {
  Tensor got = Tensor::from_vector<float>({1}, {1000.5f});
  Tensor expected = Tensor::from_vector<float>({1}, {1000.0f});
  EXPECT_FALSE(compare_tensors(got, expected).has_value());
}

TEST(TensorCompareTest, F32OutsideToleranceNamesElementAndIndex) {
  Tensor got = Tensor::from_vector<float>({2, 2}, {0, 0, 0, 1.1f});
  Tensor expected = Tensor::from_vector<float>({2, 2}, {0, 0, 0, 1.0f});
  auto mismatch = compare_tensors(got, expected);
  ASSERT_TRUE(mismatch.has_value());
  EXPECT_NE(mismatch->find("element 3 (index [1,1])"), std::string::npos)
      << *mismatch;
}

TEST(TensorCompareTest, F64IsTighterThanF32) {
  Tensor got = Tensor::from_vector<double>({1}, {1.0001});
  Tensor expected = Tensor::from_vector<double>({1}, {1.0});
  EXPECT_TRUE(compare_tensors(got, expected).has_value());
}

TEST(TensorCompareTest, NanEqualsNanButNotANumber) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor nans = Tensor::from_vector<float>({1}, {nan});
  EXPECT_FALSE(compare_tensors(nans, nans.clone()).has_value());
  Tensor one = Tensor::from_vector<float>({1}, {1.0f});
  EXPECT_TRUE(compare_tensors(one, nans).has_value());
  EXPECT_TRUE(compare_tensors(nans, one).has_value());
}

TEST(TensorCompareTest, InfinitiesMustMatchExactly) {
  const float inf = std::numeric_limits<float>::infinity();
  Tensor pos = Tensor::from_vector<float>({1}, {inf});
  Tensor neg = Tensor::from_vector<float>({1}, {-inf});
  EXPECT_FALSE(compare_tensors(pos, pos.clone()).has_value());
  EXPECT_TRUE(compare_tensors(pos, neg).has_value());
}

TEST(TensorCompareTest, IntegersAreExact) {
  Tensor got = Tensor::from_vector<int64_t>({2}, {1, 3});
  Tensor expected = Tensor::from_vector<int64_t>({2}, {1, 2});
  auto mismatch = compare_tensors(got, expected);
  ASSERT_TRUE(mismatch.has_value());
  EXPECT_NE(mismatch->find("got 3, expected 2"), std::string::npos)
      << *mismatch;
}

TEST(TensorCompareTest, DimsAndDtypeMustMatch) {
  Tensor row = Tensor::from_vector<float>({1, 2}, {1, 2});
  Tensor column = Tensor::from_vector<float>({2, 1}, {1, 2});
  Tensor ints = Tensor::from_vector<int32_t>({1, 2}, {1, 2});
  EXPECT_TRUE(compare_tensors(row, column).has_value());
  EXPECT_TRUE(compare_tensors(row, ints).has_value());
}

TEST(TensorCompareTest, Float8ComparesValuesExactlyWithNanEqualNan) {
  Tensor expected = Tensor::allocate(DType::kF8E4M3FN, {2}).value();
  expected.set_element_f64(0, 1.0);
  static_cast<uint8_t*>(expected.mutable_data())[1] = 0x7f;  // NaN
  Tensor got = expected.clone();
  static_cast<uint8_t*>(got.mutable_data())[1] = 0xff;  // the other NaN
  EXPECT_FALSE(compare_tensors(got, expected).has_value());
  static_cast<uint8_t*>(got.mutable_data())[1] = 0x00;  // 0 is not NaN
  EXPECT_TRUE(compare_tensors(got, expected).has_value());
  got.set_element_f64(1, std::nan(""));
  got.set_element_f64(0, 1.125);  // the next value: no tolerance
  EXPECT_TRUE(compare_tensors(got, expected).has_value());
}

TEST(TensorCompareTest, Float4E2M1AndFloat8E8M0CompareAsValues) {
  Tensor expected = Tensor::allocate(DType::kF4E2M1, {3}).value();
  expected.set_element_f64(0, 0.5);  // truncates to 0 as an integer
  expected.set_element_f64(1, -0.0);
  expected.set_element_f64(2, 6.0);
  Tensor got = expected.clone();
  got.set_element_f64(1, 0.0);  // -0 equals +0
  EXPECT_FALSE(compare_tensors(got, expected).has_value());
  got.set_element_f64(0, 0.0);
  EXPECT_TRUE(compare_tensors(got, expected).has_value());

  Tensor scales = Tensor::allocate(DType::kF8E8M0, {2}).value();
  static_cast<uint8_t*>(scales.mutable_data())[1] = 0xff;  // NaN
  Tensor same = scales.clone();
  EXPECT_FALSE(compare_tensors(same, scales).has_value());
  static_cast<uint8_t*>(same.mutable_data())[0] = 0x01;  // 2^-126, not 2^-127
  EXPECT_TRUE(compare_tensors(same, scales).has_value());
}

TEST(TensorCompareTest, BoolsAreExact) {
  Tensor got = Tensor::from_vector<bool>({2}, {true, false});
  Tensor expected = Tensor::from_vector<bool>({2}, {true, true});
  EXPECT_TRUE(compare_tensors(got, expected).has_value());
  EXPECT_FALSE(compare_tensors(got, got.clone()).has_value());
}

}  // namespace
}  // namespace seqrt::onnx_node
