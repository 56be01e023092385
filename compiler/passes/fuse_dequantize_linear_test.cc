#include <gtest/gtest.h>

#include <random>

#include "compiler/passes/pass_test_util.h"
#include "ops/linalg/quantized_linear.h"

namespace seqrt {
namespace {

using pass_testing::build_or_die;
using pass_testing::expect_fused;
using pass_testing::expect_unchanged;
using pass_testing::random_tensor;

constexpr int64_t kK = 40, kN = 8;  // K: two whole blocks of 16 and a short one

// Codes of `dtype` in its range, (K, N).
Tensor codes(DType dtype) {
  const bool four = dtype == DType::kI4 || dtype == DType::kU4;
  const bool is_signed = dtype == DType::kI4 || dtype == DType::kI8;
  const int64_t levels = four ? 16 : 256;
  std::mt19937 rng(5);
  Tensor t = Tensor::allocate(dtype, {kK, kN}).value();
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    const int64_t code = static_cast<int64_t>(rng() % levels);
    t.set_element_i64(i, is_signed ? code - levels / 2 : code);
  }
  return t;
}

Tensor positive(std::vector<int64_t> dims, uint32_t seed) {
  Tensor t = random_tensor(std::move(dims), seed);
  float* data = t.mutable_data_as<float>();
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    data[i] = 0.01f + 0.05f * std::fabs(data[i]);
  }
  return t;
}

struct Dq {
  DType dtype;
  std::vector<int64_t> scale_dims;
  bool zero_point = false;
  int64_t axis = 1, block = 0;
};

// y = x (3, K) @ DequantizeLinear(codes, scale, zero_point).
Graph dq_matmul(const Dq& dq, bool second_reader = false) {
  GraphBuilder b("dq_matmul");
  ValueId x = b.input("x", DType::kF32, Shape{3, kK});
  std::vector<ValueId> in = {b.constant("w", codes(dq.dtype)),
                             b.constant("scale", positive(dq.scale_dims, 9))};
  if (dq.zero_point) {
    Tensor zero = Tensor::allocate(dq.dtype, dq.scale_dims).value();
    for (int64_t i = 0; i < zero.num_elements(); ++i) {
      zero.set_element_i64(i, (i % 3) + 1);
    }
    in.push_back(b.constant("zero_point", zero));
  }
  AttrMap attrs = {{"axis", dq.axis}};
  if (dq.block) attrs["block_size"] = dq.block;
  ValueId w = b.add("DequantizeLinear", in, attrs);
  b.output(b.add("MatMul", {x, w}), "y");
  if (second_reader) b.output(b.add("Neg", {w}), "w_neg");
  return build_or_die(std::move(b));
}

std::map<std::string, Tensor> feeds() {
  return {{"x", random_tensor({3, kK}, 11)}};
}

TEST(FuseDequantizeLinear, EveryScaleLayoutBecomesAQuantizedLinear) {
  const std::vector<Dq> cases = {
      {DType::kI8, {kN}, true},             // per channel
      {DType::kU8, {}, true},               // per tensor
      {DType::kI4, {3, kN}, false, 0, 16},  // blocks, signed
      {DType::kU4, {3, kN}, true, 0, 16},   // blocks, zero points
      {DType::kU4, {kN}, false},            // unsigned, zero 0
  };
  for (const Dq& dq : cases) {
    SCOPED_TRACE(dtype_name(dq.dtype));
    Graph fused = expect_fused(dq_matmul(dq), fuse_dequantize_linear_pass(),
                               "Linear", 1, feeds());
    ASSERT_EQ(fused.nodes.size(), 1u);
    const Node& linear = fused.nodes[0];
    EXPECT_EQ(linear.attrs.at("bits").as_int(),
              dq.dtype == DType::kI8 || dq.dtype == DType::kU8 ? 8 : 4);
    EXPECT_EQ(linear.attrs.at("K").as_int(), kK);
    const bool default_zero =
        !dq.zero_point && (dq.dtype == DType::kI8 || dq.dtype == DType::kI4);
    EXPECT_EQ(linear.inputs[kLinearWZeroPoint] == kNoValue, default_zero);
    // The codes are the only copy of the weight: no f32 matrix of K x N.
    for (const auto& [id, tensor] : fused.constants) {
      EXPECT_FALSE(tensor.dtype() == DType::kF32 &&
                   tensor.num_elements() == kK * kN);
    }
  }
}

TEST(FuseDequantizeLinear, LeavesWhatTheLinearCannotHold) {
  // A block of 8, scales per row of K, and a weight read elsewhere too.
  expect_unchanged(dq_matmul({DType::kI4, {5, kN}, false, 0, 8}),
                   fuse_dequantize_linear_pass());
  expect_unchanged(dq_matmul({DType::kI8, {kK}, false, 0}),
                   fuse_dequantize_linear_pass());
  expect_unchanged(dq_matmul({DType::kI8, {kN}, true}, true),
                   fuse_dequantize_linear_pass());
}

}  // namespace
}  // namespace seqrt
