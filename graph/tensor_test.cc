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

TEST(DType, Float8E8M0IsAPowerOfTwoRoundedAsCastSays) {
  const auto up = E8M0Rounding::kUp;
  const auto down = E8M0Rounding::kDown;
  const auto nearest = E8M0Rounding::kNearest;
  const DType e8m0 = DType::kF8E8M0;
  for (int code = 0; code < 255; ++code) {
    const float value = f8_to_f32(e8m0, static_cast<uint8_t>(code));
    ASSERT_EQ(value, std::ldexp(1.0f, code - 127)) << code;
    for (E8M0Rounding mode : {up, down, nearest}) {
      EXPECT_EQ(f64_to_e8m0(value, false, mode), code) << code;
    }
  }
  EXPECT_TRUE(std::isnan(f8_to_f32(e8m0, 0xff)));
  EXPECT_EQ(dtype_bytes(e8m0, 3), 3u);
  // Between 2 (0x80) and 4 (0x81): 3 is the midpoint, which goes up.
  EXPECT_EQ(f64_to_e8m0(3.0, true, up), 0x81);
  EXPECT_EQ(f64_to_e8m0(3.0, true, down), 0x80);
  EXPECT_EQ(f64_to_e8m0(3.0, true, nearest), 0x81);
  EXPECT_EQ(f64_to_e8m0(2.9, true, nearest), 0x80);
  EXPECT_EQ(f64_to_e8m0(2.000001, true, up), 0x81);
  EXPECT_EQ(f64_to_e8m0(3.999999, true, down), 0x80);
  EXPECT_EQ(f64_to_e8m0(0.124, true, up), 0x7c);  // 0.125
  // No sign: the magnitude is kept.
  EXPECT_EQ(f64_to_e8m0(-8.0, true, up), 0x82);
  EXPECT_EQ(f64_to_e8m0(-5.0, true, nearest), 0x81);
  // No zero: zero and anything below 2^-127 become 2^-127.
  EXPECT_EQ(f64_to_e8m0(0.0, true, up), 0x00);
  EXPECT_EQ(f64_to_e8m0(-0.0, true, nearest), 0x00);
  EXPECT_EQ(f64_to_e8m0(1e-45, true, down), 0x00);
  EXPECT_EQ(f64_to_e8m0(std::ldexp(1.5, -127), true, down), 0x00);
  EXPECT_EQ(f64_to_e8m0(std::ldexp(1.5, -127), true, nearest), 0x01);
  // Past 2^127: saturate to it, or NaN; infinities and NaN are NaN.
  const double big = std::ldexp(1.5, 127);
  EXPECT_EQ(f64_to_e8m0(big, true, up), 0xfe);
  EXPECT_EQ(f64_to_e8m0(big, false, up), 0xff);
  EXPECT_EQ(f64_to_e8m0(big, false, down), 0xfe);
  EXPECT_EQ(f64_to_e8m0(big, false, nearest), 0xff);
  EXPECT_EQ(f64_to_e8m0(std::ldexp(1.0, 200), true, down), 0xfe);
  EXPECT_EQ(f64_to_e8m0(INFINITY, true, up), 0xff);
  EXPECT_EQ(f64_to_e8m0(-INFINITY, true, down), 0xff);
  EXPECT_EQ(f64_to_e8m0(NAN, true, nearest), 0xff);
  // The generic float8 entry point rounds up, as Cast does by default.
  EXPECT_EQ(f64_to_f8(e8m0, 3.0, true), 0x81);
}

TEST(DType, Float4E2M1ValuesRoundingAndSaturation) {
  const float magnitudes[8] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
  for (int code = 0; code < 16; ++code) {
    const float value = f4e2m1_to_f32(static_cast<uint8_t>(code));
    const float want = code < 8 ? magnitudes[code] : -magnitudes[code - 8];
    EXPECT_EQ(value, want) << code;
    EXPECT_EQ(std::signbit(value), code >= 8) << code;
    EXPECT_EQ(f64_to_f4e2m1(value), code) << code;
  }
  // Midpoints round to the even mantissa.
  EXPECT_EQ(f64_to_f4e2m1(0.25), 0x0);
  EXPECT_EQ(f64_to_f4e2m1(0.75), 0x2);   // 1
  EXPECT_EQ(f64_to_f4e2m1(1.25), 0x2);   // 1
  EXPECT_EQ(f64_to_f4e2m1(1.75), 0x4);   // 2
  EXPECT_EQ(f64_to_f4e2m1(2.5), 0x4);    // 2
  EXPECT_EQ(f64_to_f4e2m1(-3.5), 0xe);   // -4
  EXPECT_EQ(f64_to_f4e2m1(5.0), 0x6);    // 4
  EXPECT_EQ(f64_to_f4e2m1(5.01), 0x7);   // 6
  EXPECT_EQ(f64_to_f4e2m1(0.26), 0x1);   // 0.5
  EXPECT_EQ(f64_to_f4e2m1(-0.01), 0x8);  // -0
  // No infinity or NaN: out of range saturates; NaN is written as -0.
  EXPECT_EQ(f64_to_f4e2m1(7.0), 0x7);
  EXPECT_EQ(f64_to_f4e2m1(-1e30), 0xf);
  EXPECT_EQ(f64_to_f4e2m1(INFINITY), 0x7);
  EXPECT_EQ(f64_to_f4e2m1(-INFINITY), 0xf);
  EXPECT_EQ(f64_to_f4e2m1(NAN), 0x8);
}

TEST(DType, Float4E2M1TensorsPackLikeInt4) {
  EXPECT_TRUE(is_packed(DType::kF4E2M1));
  EXPECT_EQ(dtype_size(DType::kF4E2M1), 0u);
  EXPECT_EQ(dtype_bytes(DType::kF4E2M1, 5), 3u);
  Tensor t = Tensor::allocate(DType::kF4E2M1, {5}).value();
  EXPECT_EQ(t.byte_size(), 3u);
  const double values[5] = {0.5, -6.0, 3.0, 100.0, -1.0};
  for (int64_t i = 0; i < 5; ++i) t.set_element_f64(i, values[i]);
  const auto* bytes = static_cast<const uint8_t*>(t.data());
  EXPECT_EQ(bytes[0], 0xf1);  // 0.5 low, -6 high
  EXPECT_EQ(bytes[1], 0x75);  // 3 low, 100 saturated to 6 high
  EXPECT_EQ(bytes[2], 0x0a);  // -1 alone in the last byte
  EXPECT_EQ(t.element_f64(3), 6.0);
  t.set_element_i64(2, -2);  // rewrites one nibble, keeps its neighbour
  EXPECT_EQ(bytes[1], 0x7c);
  EXPECT_EQ(t.element_i64(4), -1);
  EXPECT_EQ(t.element_i64(0), 0);  // 0.5 truncates toward zero
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
    t.set_element_f64(0, 4.0);  // exact in every dtype, f8e8m0 included
    t.set_element_i64(1, 1);
    EXPECT_EQ(t.element_f64(0), dtype == DType::kBool ? 1.0 : 4.0)
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
