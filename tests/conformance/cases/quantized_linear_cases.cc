// Conformance cases of seqrt::Linear with weight-only quantized W (bits 4
// and 8, ops/linalg/quantized_linear.h): with and without zero points, K no
// multiple of the block or of the vector width (odd K: a pad nibble), one
// row (the CPU's GEMV), 6 rows (two GEMV groups), 37 rows (the CPU's tiled
// sgemm path, K over more than one tile), N crossing the CPU's column
// tiles, bias and activations, f16 X, and the malformed nodes; then the
// Vulkan GEMV/GEMM switch, its tiles and a grid past 65535 workgroups.
#include <algorithm>
#include <string>

#include "ops/linalg/quantized_linear.h"
#include "tests/conformance/op_case.h"

namespace seqrt {
namespace {

struct QuantSpec {
  std::vector<int64_t> x_dims;  // (..., K)
  int64_t n = 0;
  int64_t bits = 4;
  int64_t block = 32;
  bool zero_point = true;
  bool bias = true;
  std::string activation = "none";
  DType dtype = DType::kF32;
  int64_t activation_bits = 0;
};

OpCase quantized(const std::string& name, const QuantSpec& s, uint64_t seed) {
  const int64_t k = s.x_dims.back();
  const int64_t blocks = (k + s.block - 1) / s.block;
  const double code_max = s.bits == 4 ? 16.0 : 256.0;
  std::vector<Tensor> inputs = {
      random_tensor(s.dtype, s.x_dims, seed),
      random_tensor(DType::kU8, {s.n, quantized_row_bytes(k, s.bits)}, seed + 1,
                    0.0, 256.0),
      s.bias ? random_tensor(s.dtype, {s.n}, seed + 2) : Tensor(),
      random_tensor(DType::kF32, {s.n, blocks}, seed + 3, 0.005, 0.05)};
  if (s.zero_point) {
    inputs.push_back(
        random_tensor(DType::kU8, {s.n, blocks}, seed + 4, 0.0, code_max));
  }
  OpCase c = make_case("Linear", name, std::move(inputs),
                       {{"activation", s.activation},
                        {"bits", s.bits},
                        {"block_size", s.block},
                        {"K", k},
                        {"activation_bits", s.activation_bits}});
  c.domain = kSeqrtDomain;
  c.constant_inputs = {false, true, true, true, true};
  // fp32 accumulation against the reference's fp64.
  return loosened(std::move(c), s.dtype == DType::kF32 ? 1e-4 : 1e-2);
}

void add_value_cases(std::vector<OpCase>& cases) {
  uint64_t seed = 100;
  auto add = [&](const std::string& name, const QuantSpec& s) {
    cases.push_back(quantized(name, s, seed));
    seed += 10;
  };
  add("q4_m1_zp", {{1, 64}, 40, 4, 16, true, true});
  add("q4_m1_no_zp_short_block", {{1, 100}, 24, 4, 32, false, true});
  add("q4_m1_odd_k_gelu", {{77}, 33, 4, 16, true, true, "gelu"});
  add("q4_m1_n_tiles_silu", {{1, 200}, 70, 4, 64, true, true, "silu"});
  add("q4_m6_two_groups", {{6, 128}, 20, 4, 32, true, false});
  add("q4_m37_tiled_relu", {{37, 200}, 70, 4, 64, true, true, "relu"});
  add("q4_m37_k_tiles_no_zp", {{37, 1100}, 17, 4, 32, false, true});
  add("q4_rank3_block_1024", {{2, 5, 1100}, 9, 4, 1024, true, true});
  add("q8_m1_zp_n_tiles", {{1, 96}, 70, 8, 32, true, true});
  add("q8_m1_no_zp_odd_k_sigmoid",
      {{1, 51}, 19, 8, 16, false, true, "sigmoid"});
  add("q8_m3_gelu_tanh", {{3, 130}, 45, 8, 128, true, true, "gelu_tanh"});
  add("q8_m37_tiled_k_tiles", {{37, 600}, 130, 8, 32, true, false});
  add("q4_m1_f16", {{1, 64}, 24, 4, 32, true, true, "none", DType::kF16});
  add("q8_m37_bf16", {{37, 48}, 20, 8, 16, false, true, "relu", DType::kBF16});

  // The weights as graph inputs: nothing prepared at compile time.
  OpCase runtime =
      quantized("q4_runtime_weights", {{4, 40}, 12, 4, 16, true, true}, seed);
  runtime.constant_inputs = {false, false, false, false, false};
  cases.push_back(runtime);

  // Vulkan's switches (kernels/quantized_linear.cc): 8 rows the most the
  // GEMV takes, 9 and 65 rows the GEMM with one and two row tiles and N
  // crossing its 64-column tiles, K short of a block and of a word of codes.
  seed += 10;
  add("q4_m8_gemv_most_rows_relu", {{8, 72}, 33, 4, 16, true, true, "relu"});
  add("q4_m9_gemm_odd_k_no_zp_silu", {{9, 75}, 65, 4, 32, false, true, "silu"});
  add("q8_m65_gemm_row_tiles_gelu", {{65, 83}, 130, 8, 16, true, true, "gelu"});
  add("q8_rank3_m10_no_bias", {{2, 5, 29}, 70, 8, 16, false, false});
  // 8 columns per GEMV workgroup: 65537 workgroups, past a 65535 grid
  // dimension, so the dispatch spreads over y.
  add("q4_m2_many_columns", {{2, 16}, 8 * 65536 + 3, 4, 16, true, true});
}

// int8 activations (activation_bits 8): 4-bit codes in blocks of 32 (four
// blocks per VNNI unit) and 64 with zero points and a tail past the last
// unit, 8-bit codes, 1 to 64 rows (the CPU's VNNI GEMV, where the CPU has
// it), 4-bit blocks of 16 and more than 64 rows (its float kernels on X's
// int8 values), a short last block and odd K, N crossing its 16-column
// tiles, f16 X, and a row with a zero block (scale 0).
void add_int8_activation_cases(std::vector<OpCase>& cases) {
  uint64_t seed = 500;
  auto add = [&](const std::string& name, QuantSpec s) {
    s.activation_bits = 8;
    cases.push_back(quantized(name, s, seed));
    seed += 10;
  };
  add("a8_q4_m1_block16", {{1, 64}, 40, 4, 16, true, true});
  add("a8_q4_m1_block32_no_zp", {{1, 256}, 33, 4, 32, false, false});
  add("a8_q4_m1_block64_zp_tail", {{1, 200}, 45, 4, 64, true, true});
  add("a8_q4_m3_block128_silu", {{3, 384}, 50, 4, 128, true, true, "silu"});
  add("a8_q4_m4_short_block_odd_k", {{4, 101}, 17, 4, 32, true, true});
  add("a8_q4_m9_row_groups_gelu", {{9, 160}, 70, 4, 64, false, true, "gelu"});
  add("a8_q8_m1_zp", {{1, 96}, 70, 8, 32, true, true});
  add("a8_q8_m2_short_block_relu", {{2, 75}, 19, 8, 16, true, false, "relu"});
  add("a8_q8_m37_block1024", {{37, 1100}, 9, 8, 1024, false, true});
  add("a8_q4_m70_tiles", {{70, 256}, 40, 4, 32, true, true});
  add("a8_q4_rank3_f16", {{2, 3, 64}, 24, 4, 32, true, true, "none",
                          DType::kF16});
  QuantSpec zero{{2, 64}, 20, 4, 32, true, true};
  zero.activation_bits = 8;
  OpCase zeros = quantized("a8_q4_zero_block", zero, seed);
  float* x = zeros.inputs[kLinearX].mutable_data_as<float>();
  std::fill(x + 32, x + 64, 0.0f);  // row 0's second block
  cases.push_back(zeros);
}

void add_error_cases(std::vector<OpCase>& cases) {
  const QuantSpec base{{2, 64}, 8, 4, 32, true, true};
  auto bad = [&](const std::string& name) {
    return quantized(name, base, 300);
  };
  OpCase bits3 = bad("q_rejects_bits_3");
  bits3.attrs["bits"] = Attribute(3);
  cases.push_back(expect_failure(bits3));
  OpCase block24 = bad("q_rejects_block_24");
  block24.attrs["block_size"] = Attribute(24);
  cases.push_back(expect_failure(block24));
  OpCase k_mismatch = bad("q_rejects_k_mismatch");
  k_mismatch.attrs["K"] = Attribute(60);
  cases.push_back(expect_failure(k_mismatch));
  OpCase wide_w = bad("q_rejects_w_width");
  wide_w.inputs[kLinearW] = random_tensor(DType::kU8, {8, 64}, 301, 0.0, 256.0);
  cases.push_back(expect_failure(wide_w));
  OpCase scale_shape = bad("q_rejects_scale_shape");
  scale_shape.inputs[kLinearWScale] = random_tensor(DType::kF32, {8, 3}, 302);
  cases.push_back(expect_failure(scale_shape));
  OpCase no_scale = bad("q_rejects_missing_scale");
  no_scale.inputs[kLinearWScale] = Tensor();
  cases.push_back(expect_failure(no_scale));
  OpCase zp_dtype = bad("q_rejects_zero_point_dtype");
  zp_dtype.inputs[kLinearWZeroPoint] =
      random_tensor(DType::kI32, {8, 2}, 303, 0.0, 16.0);
  cases.push_back(expect_failure(zp_dtype));
  OpCase float_w = bad("q_rejects_float_w");
  float_w.inputs[kLinearW] = random_tensor(DType::kF32, {8, 32}, 304);
  cases.push_back(expect_failure(float_w));
  // bits = 0 is the float form, which takes no scales.
  OpCase float_form = bad("q_rejects_scale_without_bits");
  float_form.attrs["bits"] = Attribute(0);
  float_form.inputs[kLinearW] = random_tensor(DType::kF32, {64, 8}, 305);
  cases.push_back(expect_failure(float_form));
  OpCase activation4 = bad("q_rejects_activation_bits_4");
  activation4.attrs["activation_bits"] = Attribute(4);
  cases.push_back(expect_failure(activation4));
  OpCase float_a8 = bad("q_rejects_activation_bits_on_float_w");
  float_a8.attrs["bits"] = Attribute(0);
  float_a8.attrs["activation_bits"] = Attribute(8);
  float_a8.inputs[kLinearW] = random_tensor(DType::kF32, {64, 8}, 306);
  float_a8.inputs.resize(kLinearWScale);
  float_a8.constant_inputs.resize(kLinearWScale);
  cases.push_back(expect_failure(float_a8));
}

}  // namespace

void add_quantized_linear_cases(std::vector<OpCase>& cases) {
  add_value_cases(cases);
  add_int8_activation_cases(cases);
  add_error_cases(cases);
}

}  // namespace seqrt
