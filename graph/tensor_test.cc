#include "graph/tensor.h"

#include <gtest/gtest.h>

#include <cmath>

namespace seqrt {
namespace {

TEST(DType, NamesRoundTrip) {
  for (int i = 1; i <= static_cast<int>(kLastDType); ++i) {
    DType dtype = static_cast<DType>(i);
    EXPECT_EQ(parse_dtype(dtype_name(dtype)), dtype);
    EXPECT_GT(dtype_bits(dtype), 0u);
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

TEST(DType, Int4PacksTwoPerByteLowNibbleFirst) {
  EXPECT_EQ(dtype_bytes(DType::kI4, 5), 3u);
  EXPECT_EQ(dtype_bytes(DType::kU4, 4), 2u);
  EXPECT_EQ(dtype_bytes(DType::kF8E5M2, 5), 5u);
  EXPECT_EQ(dtype_bytes(DType::kF32, 3), 12u);
  uint8_t data[8] = {};
  for (int i = 0; i < 16; ++i) pack_int4(data, i, static_cast<int8_t>(i - 8));
  EXPECT_EQ(data[0], 0x98);  // -8 (0x8) low, -7 (0x9) high
  for (int i = 0; i < 16; ++i) {
    EXPECT_EQ(unpack_int4(data, i, true), i - 8);
    EXPECT_EQ(unpack_int4(data, i, false), (i + 8) % 16);
  }
  pack_int4(data, 3, 5);  // rewrites one nibble, keeps its neighbour
  EXPECT_EQ(data[1], 0x5a);
}

TEST(DType, Int4TensorElements) {
  Tensor t = Tensor::allocate(DType::kI4, {3}).value();
  EXPECT_EQ(t.byte_size(), 2u);
  t.set_element_f64(0, -9.7);  // saturates
  t.set_element_f64(1, 6.9);   // truncates
  t.set_element_i64(2, 9);     // wraps, as integer stores do
  EXPECT_EQ(t.element_i64(0), -8);
  EXPECT_EQ(t.element_i64(1), 6);
  EXPECT_EQ(t.element_i64(2), -7);
  Tensor u = Tensor::allocate(DType::kU4, {2}).value();
  u.set_element_f64(0, 20.0);
  u.set_element_f64(1, -1.0);
  EXPECT_EQ(u.element_f64(0), 15.0);
  EXPECT_EQ(u.element_f64(1), 0.0);
}

TEST(DType, Float8EveryFiniteCodeRoundTrips) {
  for (DType dtype : {DType::kF8E4M3FN, DType::kF8E4M3FNUZ, DType::kF8E5M2,
                      DType::kF8E5M2FNUZ}) {
    for (int code = 0; code < 256; ++code) {
      const float value = f8_to_f32(dtype, static_cast<uint8_t>(code));
      if (!std::isfinite(value)) continue;
      EXPECT_EQ(f64_to_f8(dtype, value, false), code)
          << dtype_name(dtype) << " code " << code;
    }
  }
}

TEST(DType, Float8E4M3FNEdges) {
  const DType e4m3 = DType::kF8E4M3FN;
  EXPECT_EQ(f8_to_f32(e4m3, 0x7e), 448.0f);
  EXPECT_TRUE(std::isnan(f8_to_f32(e4m3, 0x7f)));
  EXPECT_TRUE(std::isnan(f8_to_f32(e4m3, 0xff)));
  EXPECT_EQ(f8_to_f32(e4m3, 0x01), std::ldexp(1.0f, -9));  // min subnormal
  EXPECT_EQ(f64_to_f8(e4m3, 464.0, false), 0x7e);          // tie: to even (448)
  EXPECT_EQ(f64_to_f8(e4m3, 500.0, true), 0x7e);
  EXPECT_EQ(f64_to_f8(e4m3, 500.0, false) & 0x7f, 0x7f);  // NaN
  EXPECT_EQ(f64_to_f8(e4m3, -INFINITY, true), 0xfe);
  EXPECT_EQ(f64_to_f8(e4m3, INFINITY, false) & 0x7f, 0x7f);
  EXPECT_EQ(f64_to_f8(e4m3, std::ldexp(1.0, -10), true), 0x00);  // tie to 0
  EXPECT_EQ(f64_to_f8(e4m3, 1.5 * std::ldexp(1.0, -9), true), 0x02);
  EXPECT_EQ(f64_to_f8(e4m3, -0.0, true), 0x80);
  EXPECT_TRUE(std::isnan(f8_to_f32(e4m3, f64_to_f8(e4m3, NAN, true))));
}

TEST(DType, Float8FnuzAndE5M2Edges) {
  const DType e4fnuz = DType::kF8E4M3FNUZ;
  EXPECT_EQ(f8_to_f32(e4fnuz, 0x7f), 240.0f);
  EXPECT_TRUE(std::isnan(f8_to_f32(e4fnuz, 0x80)));
  EXPECT_EQ(f64_to_f8(e4fnuz, -0.0, true), 0x00);       // no negative zero
  EXPECT_EQ(f64_to_f8(e4fnuz, INFINITY, true), 0x7f);   // saturates
  EXPECT_EQ(f64_to_f8(e4fnuz, INFINITY, false), 0x80);  // NaN
  EXPECT_EQ(f64_to_f8(e4fnuz, -1000.0, true), 0xff);
  EXPECT_EQ(f64_to_f8(e4fnuz, -1000.0, false), 0x80);

  const DType e5m2 = DType::kF8E5M2;
  EXPECT_EQ(f8_to_f32(e5m2, 0x7b), 57344.0f);
  EXPECT_TRUE(std::isinf(f8_to_f32(e5m2, 0x7c)));
  EXPECT_TRUE(std::isnan(f8_to_f32(e5m2, 0x7e)));
  EXPECT_EQ(f64_to_f8(e5m2, INFINITY, true), 0x7b);    // saturates
  EXPECT_EQ(f64_to_f8(e5m2, -INFINITY, false), 0xfc);  // stays infinite
  EXPECT_EQ(f64_to_f8(e5m2, -1e6, true), 0xfb);
  EXPECT_EQ(f64_to_f8(e5m2, 1e6, false), 0x7c);
  EXPECT_EQ(f64_to_f8(e5m2, 61440.0, false), 0x7c);  // tie rounds up: inf

  const DType e5fnuz = DType::kF8E5M2FNUZ;
  EXPECT_EQ(f8_to_f32(e5fnuz, 0x7f), 57344.0f);
  EXPECT_EQ(f64_to_f8(e5fnuz, -INFINITY, true), 0xff);
  EXPECT_EQ(f64_to_f8(e5fnuz, -INFINITY, false), 0x80);
  EXPECT_EQ(f64_to_f8(e5fnuz, 1e9, true), 0x7f);
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
