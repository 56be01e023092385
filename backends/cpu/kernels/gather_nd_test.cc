// GatherND and IsNaN/IsInf against the reference kernels: GatherND over
// every k and batch_dims, byte widths 1 to 8, negative and int32 indices,
// sizes past one parallel chunk; IsNaN/IsInf on NaNs of any payload and
// sign, both infinities, the largest finite values and subnormals.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "backends/cpu/kernels/kernel_test_util.h"

namespace seqrt::cpu {
namespace {

using namespace kernel_testing;  // NOLINT

// Indices (count, k) into dims [b, b + k) of `data`, some negative.
Tensor tuples(const Tensor& data, std::vector<int64_t> index_dims, int64_t b,
              DType dtype) {
  Tensor indices = Tensor::allocate(dtype, index_dims).value();
  const int64_t k = index_dims.back();
  for (int64_t i = 0; i < indices.num_elements(); ++i) {
    const int64_t size = data.dim(b + i % k);
    indices.set_element_i64(i, (i * 7 + 3) % (2 * size) - size);
  }
  return indices;
}

TEST(CpuGatherND, EveryKAndBatchDims) {
  for (DType dtype : {DType::kF32, DType::kI64, DType::kF16, DType::kBool}) {
    Tensor data = uniform({3, 5, 4, 6}, 1, -4, 4, dtype);
    for (int64_t b : {0, 1, 2}) {
      for (int64_t k = 1; k <= 4 - b; ++k) {
        std::vector<int64_t> index_dims(data.dims().begin(),
                                        data.dims().begin() + b);
        index_dims.insert(index_dims.end(), {7, k});
        SCOPED_TRACE(std::string(dtype_name(dtype)) + " b " +
                     std::to_string(b) + " k " + std::to_string(k));
        expect_matches_reference(
            kOnnxDomain, "GatherND",
            {data,
             tuples(data, index_dims, b, b == 1 ? DType::kI32 : DType::kI64)},
            {{"batch_dims", b}}, 0);
      }
    }
  }
}

TEST(CpuGatherND, ManySlicesAndErrors) {
  // 40000 single elements: several parallel chunks.
  Tensor data = uniform({200, 300}, 2, -1, 1, DType::kF64);
  expect_matches_reference(kOnnxDomain, "GatherND",
                           {data, tuples(data, {40000, 2}, 0, DType::kI64)}, {},
                           0);
  auto bad = run_cpu("GatherND",
                     {uniform({3, 2}, 3), op_testing::i64({1, 2}, {0, 2})});
  op_testing::expect_error(
      bad.status(),
      {"[GatherND]", "index 2 is out of range [-2, 1] for dim 1"});
  auto batch = run_cpu("GatherND",
                       {uniform({3, 2}, 3), op_testing::i64({3, 1}, {0, 1, 0})},
                       {{"batch_dims", 2}});
  op_testing::expect_error(batch.status(), {"[GatherND]", "batch_dims 2"});
}

template <typename U>
Tensor from_bits(DType dtype, const std::vector<U>& bits) {
  Tensor t =
      Tensor::allocate(dtype, {static_cast<int64_t>(bits.size())}).value();
  std::memcpy(t.mutable_data(), bits.data(), bits.size() * sizeof(U));
  return t;
}

void expect_classes_match(const Tensor& x) {
  expect_matches_reference(kOnnxDomain, "IsNaN", {x}, {}, 0);
  for (int negative : {0, 1}) {
    for (int positive : {0, 1}) {
      expect_matches_reference(
          kOnnxDomain, "IsInf", {x},
          {{"detect_negative", negative}, {"detect_positive", positive}}, 0);
    }
  }
}

TEST(CpuFloatClass, EveryDtypeAndEdgeBits) {
  // NaNs with payloads and either sign, infinities, the largest finite
  // value, the smallest subnormal, zeros.
  expect_classes_match(from_bits<uint16_t>(
      DType::kF16,
      {0x7c00, 0xfc00, 0x7e00, 0xfc01, 0x7bff, 0x0001, 0x8000, 0x3c00}));
  expect_classes_match(from_bits<uint16_t>(
      DType::kBF16,
      {0x7f80, 0xff80, 0x7fc0, 0xff81, 0x7f7f, 0x0001, 0x8000, 0x3f80}));
  expect_classes_match(from_bits<uint32_t>(
      DType::kF32, {0x7f800000u, 0xff800000u, 0x7fc00000u, 0xff800001u,
                    0x7f7fffffu, 0x00000001u, 0x80000000u, 0x3f800000u}));
  constexpr double kInf = std::numeric_limits<double>::infinity();
  Tensor f64 = Tensor::from_vector<double>(
      {6}, {kInf, -kInf, std::nan(""), -std::nan(""),
            std::numeric_limits<double>::max(),
            std::numeric_limits<double>::denorm_min()});
  expect_classes_match(f64);
  // Past one parallel chunk.
  Tensor big = uniform({300, 301}, 4, -1, 1);
  float* p = big.mutable_data_as<float>();
  for (int64_t i = 0; i < big.num_elements(); i += 97) {
    p[i] = i % 2 ? std::numeric_limits<float>::quiet_NaN() : -HUGE_VALF;
  }
  expect_classes_match(big);
}

}  // namespace
}  // namespace seqrt::cpu
