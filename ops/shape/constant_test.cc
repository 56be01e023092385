#include <gtest/gtest.h>

#include "ops/op_test_util.h"

namespace seqrt {
namespace {

using op_testing::infer_op;
using op_testing::run_op;
using op_testing::values_of;

TEST(Constant, TensorValue) {
  Tensor value = Tensor::from_vector<int32_t>({2}, {3, -4});
  auto out = run_op("Constant", {}, {{"value", value}});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_TRUE((*out)[0].same_as(value));
}

TEST(Constant, ScalarAndListAttributes) {
  auto f = run_op("Constant", {}, {{"value_float", Attribute(1.5f)}});
  ASSERT_TRUE(f.is_ok());
  EXPECT_EQ((*f)[0].dtype(), DType::kF32);
  EXPECT_TRUE((*f)[0].dims().empty());
  auto fs =
      run_op("Constant", {}, {{"value_floats", std::vector<float>{1, 2}}});
  ASSERT_TRUE(fs.is_ok());
  EXPECT_EQ((*fs)[0].dims(), (std::vector<int64_t>{2}));
  auto i = run_op("Constant", {}, {{"value_int", Attribute(7)}});
  ASSERT_TRUE(i.is_ok());
  EXPECT_EQ((*i)[0].dtype(), DType::kI64);
  auto is =
      run_op("Constant", {}, {{"value_ints", std::vector<int64_t>{4, 5, 6}}});
  ASSERT_TRUE(is.is_ok());
  EXPECT_EQ(values_of((*is)[0]), (std::vector<double>{4, 5, 6}));
}

TEST(Constant, InferenceKnowsTheValue) {
  auto out = infer_op("Constant", {},
                      {{"value_ints", std::vector<int64_t>{0, -1, 64}}});
  ASSERT_TRUE(out.is_ok());
  EXPECT_EQ(out->outputs[0].dtype, DType::kI64);
  EXPECT_EQ(*out->outputs[0].shape, Shape({3}));
  EXPECT_EQ(values_of(out->values[0]), (std::vector<double>{0, -1, 64}));
}

TEST(Constant, NeedsExactlyOneValue) {
  auto none = run_op("Constant", {});
  ASSERT_FALSE(none.is_ok());
  EXPECT_NE(none.status().message().find("[Constant]"), std::string::npos);
  EXPECT_FALSE(
      run_op("Constant", {},
             {{"value_int", Attribute(1)}, {"value_float", Attribute(1.0f)}})
          .is_ok());
  auto text = run_op("Constant", {}, {{"value_string", Attribute("hi")}});
  ASSERT_FALSE(text.is_ok());
  EXPECT_EQ(text.status().code(), StatusCode::kUnsupported);
}

}  // namespace
}  // namespace seqrt
