#include "graph/tensor.h"

#include <gtest/gtest.h>

#include <cmath>

namespace seqrt {
namespace {

TEST(DType, NamesRoundTrip) {
  for (int i = 1; i <= static_cast<int>(kLastDType); ++i) {
    DType dtype = static_cast<DType>(i);
    EXPECT_EQ(parse_dtype(dtype_name(dtype)), dtype);
    EXPECT_GT(dtype_size(dtype), 0u);
  }
  EXPECT_FALSE(parse_dtype("f128").has_value());
}

TEST(DType, HalfAndBFloat16Conversions) {
  EXPECT_EQ(f16_to_f32(f32_to_f16(1.5f)), 1.5f);
  EXPECT_EQ(f32_to_f16(65504.0f), 0x7bff);  // largest finite half
  EXPECT_TRUE(std::isinf(f16_to_f32(f32_to_f16(1e6f))));
  EXPECT_EQ(bf16_to_f32(f32_to_bf16(-2.0f)), -2.0f);
  // 1 + 2^-8 is halfway between two bf16 values: ties round to even (1.0).
  EXPECT_EQ(bf16_to_f32(f32_to_bf16(1.00390625f)), 1.0f);
  EXPECT_TRUE(std::isnan(bf16_to_f32(f32_to_bf16(std::nanf("")))));
}

TEST(Shape, SymbolicDims) {
  Shape shape{Dim::symbol("batch"), 64, Dim::unknown()};
  EXPECT_EQ(shape.to_string(), "(batch,64,?)");
  EXPECT_FALSE(shape.is_fixed());
  EXPECT_TRUE(shape[0].is_symbol());
  EXPECT_TRUE(shape[1].is_fixed());
  EXPECT_TRUE(shape[2].is_unknown());
  EXPECT_EQ(Shape::from_dims({2, 3}).fixed_dims(),
            (std::vector<int64_t>{2, 3}));
}

TEST(Shape, CheckedElementCountRejectsOverflow) {
  EXPECT_EQ(checked_num_elements({2, 3, 4}).value(), 24);
  EXPECT_EQ(checked_num_elements({}).value(), 1);
  EXPECT_EQ(checked_num_elements({5, 0, int64_t{1} << 62}).value(), 0);
  Result<int64_t> huge = checked_num_elements({int64_t{1} << 40, 1 << 20});
  ASSERT_FALSE(huge.is_ok());
  EXPECT_EQ(huge.status().code(), StatusCode::kLimitExceeded);
  EXPECT_FALSE(checked_num_elements({3, -1}).is_ok());
}

TEST(Tensor, AllocateIsZeroedAndAligned) {
  Tensor t = Tensor::allocate(DType::kF32, {3, 5}).value();
  EXPECT_EQ(t.num_elements(), 15);
  EXPECT_EQ(t.byte_size(), 60u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data()) % 64, 0u);
  for (int64_t i = 0; i < 15; ++i) EXPECT_EQ(t.data_as<float>()[i], 0.0f);
  EXPECT_FALSE(t.is_view());
}

TEST(Tensor, LargeAllocationsAreZeroedAlignedAndReleased) {
  // Sizes around the threshold where tensors get their own mapping.
  for (int64_t mib : {3, 4, 5, 17}) {
    const int64_t count = mib * 1024 * 1024 / 4 + 3;
    for (int round = 0; round < 2; ++round) {
      Tensor t = Tensor::allocate(DType::kF32, {count}).value();
      EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data()) % 64, 0u);
      float* data = t.mutable_data_as<float>();
      int64_t nonzero = 0;
      for (int64_t i = 0; i < count; ++i) nonzero += data[i] != 0.0f;
      EXPECT_EQ(nonzero, 0) << mib << " MiB, round " << round;
      // Dirty every element so a reused block would show up as nonzero.
      for (int64_t i = 0; i < count; ++i) data[i] = 1.0f;
    }
  }
}

TEST(Tensor, ElementAccessConvertsEveryDType) {
  for (int i = 1; i <= static_cast<int>(kLastDType); ++i) {
    DType dtype = static_cast<DType>(i);
    Tensor t = Tensor::allocate(dtype, {2}).value();
    t.set_element_f64(0, 3.0);
    t.set_element_i64(1, 1);
    EXPECT_EQ(t.element_f64(0), dtype == DType::kBool ? 1.0 : 3.0)
        << dtype_name(dtype);
    EXPECT_EQ(t.element_i64(1), 1) << dtype_name(dtype);
  }
  Tensor i8 = Tensor::allocate(DType::kI8, {1}).value();
  i8.set_element_f64(0, 1000.0);  // saturates rather than wrapping
  EXPECT_EQ(i8.element_i64(0), 127);
}

TEST(Tensor, ViewSharesStorageAndCloneCopies) {
  auto storage =
      std::make_shared<std::vector<float>>(std::vector<float>{1, 2, 3, 4});
  Tensor view = Tensor::view(DType::kF32, {2, 2}, storage->data(), storage);
  EXPECT_TRUE(view.is_view());
  EXPECT_EQ(view.data(), storage->data());
  Tensor copy = view.clone();
  EXPECT_FALSE(copy.is_view());
  EXPECT_NE(copy.data(), view.data());
  EXPECT_TRUE(copy.same_as(view));
  Tensor flat = view.reshaped({4}).value();
  EXPECT_EQ(flat.data(), view.data());
  EXPECT_FALSE(view.reshaped({3}).is_ok());
}

TEST(Tensor, FromVectorAndScalar) {
  Tensor t = Tensor::from_vector<int64_t>({3}, {7, 8, 9});
  EXPECT_EQ(t.dtype(), DType::kI64);
  EXPECT_EQ(t.data_as<int64_t>()[2], 9);
  Tensor s = Tensor::scalar(2.5f);
  EXPECT_EQ(s.rank(), 0u);
  EXPECT_EQ(s.num_elements(), 1);
}

TEST(Status, ResultCarriesValueOrError) {
  Result<int> good = 3;
  EXPECT_TRUE(good.is_ok());
  EXPECT_EQ(*good, 3);
  Result<int> bad = invalid_argument("[Op] bad {}", 1);
  EXPECT_FALSE(bad.is_ok());
  EXPECT_EQ(bad.status().message(), "[Op] bad 1");
  EXPECT_EQ(bad.status().to_string(), "invalid argument: [Op] bad 1");
  EXPECT_EQ(bad.status().with_context("file.seqrt").message(),
            "file.seqrt: [Op] bad 1");
}

}  // namespace
}  // namespace seqrt
