// Cases of the ONNX quantization ops (ops/quantize/) and of Cast into and
// out of the storage-only dtypes (i4, u4, float8).
#include <vector>

#include "tests/conformance/op_case.h"

namespace seqrt {

namespace {

Tensor filled(DType dtype, std::vector<int64_t> dims, std::vector<double> v) {
  Tensor t = Tensor::allocate(dtype, std::move(dims)).value();
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    t.set_element_f64(i, v[static_cast<size_t>(i) % v.size()]);
  }
  return t;
}

void add_quantize_linear_cases(std::vector<OpCase>& cases) {
  const Tensor x = random_tensor(DType::kF32, {4, 6}, 900, -3, 3);
  cases.push_back(make_case(
      "QuantizeLinear", "per_tensor_u8",
      {x, Tensor::scalar<float>(0.02f), Tensor::scalar<uint8_t>(128)}));
  cases.push_back(
      make_case("QuantizeLinear", "per_axis_i8",
                {x, random_tensor(DType::kF32, {4}, 901, 0.01, 0.05),
                 filled(DType::kI8, {4}, {-2, 0, 3, 1})},
                {{"axis", int64_t{0}}}));
  cases.push_back(
      make_case("QuantizeLinear", "blocked_i4_odd_dim",
                {random_tensor(DType::kF32, {3, 5}, 902, -2, 2),
                 random_tensor(DType::kF32, {3, 2}, 903, 0.2, 0.4),
                 filled(DType::kI4, {3, 2}, {0, -1, 1})},
                {{"axis", int64_t{1}}, {"block_size", int64_t{3}}}));
  cases.push_back(make_case(
      "QuantizeLinear", "f8e4m3fn_no_saturate",
      {x, Tensor::scalar<float>(0.01f), filled(DType::kF8E4M3FN, {}, {0})},
      {{"saturate", int64_t{0}}}));
  cases.push_back(expect_failure(
      make_case("QuantizeLinear", "rejects_a_short_axis_scale",
                {x, random_tensor(DType::kF32, {3}, 904, 0.1, 0.2)})));
}

void add_dequantize_linear_cases(std::vector<OpCase>& cases) {
  cases.push_back(
      make_case("DequantizeLinear", "per_tensor_u8",
                {random_tensor(DType::kU8, {4, 6}, 910, 0, 255),
                 Tensor::scalar<float>(0.05f), Tensor::scalar<uint8_t>(120)}));
  cases.push_back(
      make_case("DequantizeLinear", "blocked_i4",
                {filled(DType::kI4, {4, 8}, {-8, -3, 0, 2, 7, 5, -1}),
                 random_tensor(DType::kF32, {4, 2}, 911, 0.1, 1.0)},
                {{"axis", int64_t{1}}, {"block_size", int64_t{4}}}));
  cases.push_back(make_case("DequantizeLinear", "per_axis_u4",
                            {filled(DType::kU4, {3, 5}, {0, 15, 7, 9, 3, 12}),
                             random_tensor(DType::kF32, {3}, 912, 0.1, 1.0),
                             filled(DType::kU4, {3}, {8, 7, 0})},
                            {{"axis", int64_t{0}}}));
  cases.push_back(make_case(
      "DequantizeLinear", "f8e5m2_to_f16",
      {filled(DType::kF8E5M2, {2, 3}, {-1.5, 0.25, 3072, 0, -0.0078125}),
       Tensor::scalar<float>(2.0f)},
      {{"output_dtype", int64_t{10}}}));
}

void add_integer_matmul_cases(std::vector<OpCase>& cases) {
  cases.push_back(make_case("DynamicQuantizeLinear", "f32_3x5",
                            {random_tensor(DType::kF32, {3, 5}, 920, -2, 5)},
                            {}, 3));
  cases.push_back(make_case(
      "MatMulInteger", "u8_batched_zero_points",
      {random_tensor(DType::kU8, {2, 3, 4}, 921, 0, 255),
       random_tensor(DType::kU8, {4, 5}, 922, 0, 255),
       filled(DType::kU8, {3}, {10, 128, 0}), Tensor::scalar<uint8_t>(100)}));
  cases.push_back(
      make_case("QLinearMatMul", "i8_3x4_4x2",
                {random_tensor(DType::kI8, {3, 4}, 923, -100, 100),
                 Tensor::scalar<float>(0.03f), Tensor::scalar<int8_t>(1),
                 random_tensor(DType::kI8, {4, 2}, 924, -100, 100),
                 Tensor::scalar<float>(0.02f), Tensor::scalar<int8_t>(-2),
                 Tensor::scalar<float>(0.5f), Tensor::scalar<int8_t>(5)}));
}

void add_storage_cast_cases(std::vector<OpCase>& cases) {
  cases.push_back(
      make_case("Cast", "f32_to_f8e4m3fnuz",
                {random_tensor(DType::kF32, {3, 5}, 930, -300, 300)},
                {{"to", int64_t{18}}}));
  cases.push_back(make_case("Cast", "i4_to_f32",
                            {filled(DType::kI4, {7}, {-8, -1, 0, 1, 7, 3, -5})},
                            {{"to", int64_t{1}}}));
  cases.push_back(make_case("Cast", "f32_to_u4_wraps",
                            {random_tensor(DType::kF32, {9}, 931, -20, 20)},
                            {{"to", int64_t{21}}}));
}

}  // namespace

void add_quantize_cases(std::vector<OpCase>& cases) {
  add_quantize_linear_cases(cases);
  add_dequantize_linear_cases(cases);
  add_integer_matmul_cases(cases);
  add_storage_cast_cases(cases);
}

}  // namespace seqrt
