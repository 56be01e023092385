// Conformance cases of seqrt::Linear (ranks 1-4 of X, every activation, no
// bias, f16/bf16, K = 1, N that is no multiple of the vector width, bad
// shapes), plus MatMul and Gemm with constant weights: a backend may prepare
// those once at compile time (the CPU backend's oneDNN primitives with
// reordered weights), a path the cases with graph-input weights never take.
#include <string>

#include "tests/conformance/op_case.h"

namespace seqrt {
namespace {

Tensor rand(DType dtype, std::vector<int64_t> dims, uint64_t seed) {
  return random_tensor(dtype, std::move(dims), seed);
}

// X of `x_dims`, W (K, N) and, when `bias`, B (N); W and B are constants.
OpCase linear(const std::string& name, std::vector<int64_t> x_dims, int64_t n,
              bool bias, const std::string& activation = "none",
              DType dtype = DType::kF32, uint64_t seed = 1) {
  int64_t k = x_dims.back();
  std::vector<Tensor> inputs = {rand(dtype, x_dims, seed),
                                rand(dtype, {k, n}, seed + 1)};
  if (bias) inputs.push_back(rand(dtype, {n}, seed + 2));
  OpCase c = make_case("Linear", name, std::move(inputs),
                       {{"activation", activation}});
  c.domain = kSeqrtDomain;
  c.constant_inputs = {false, true, true};
  return c;
}

void add_linear_op_cases(std::vector<OpCase>& cases) {
  cases.push_back(linear("rank1", {16}, 5, true));
  cases.push_back(linear("rank2", {7, 16}, 24, true));
  cases.push_back(
      linear("rank3", {2, 5, 32}, 48, true, "none", DType::kF32, 4));
  cases.push_back(
      linear("rank4", {2, 3, 4, 8}, 16, true, "none", DType::kF32, 7));
  const char* activations[] = {"relu", "gelu", "gelu_tanh", "sigmoid", "silu"};
  uint64_t seed = 10;
  for (const char* activation : activations) {
    cases.push_back(linear(std::string("act_") + activation, {2, 6, 24}, 40,
                           true, activation, DType::kF32, seed));
    seed += 3;
  }
  cases.push_back(linear("no_bias", {9, 12}, 20, false));
  cases.push_back(linear("no_bias_gelu", {3, 4, 12}, 20, false, "gelu"));
  cases.push_back(loosened(
      linear("f16_silu", {3, 5, 16}, 24, true, "silu", DType::kF16), 1e-2));
  cases.push_back(loosened(
      linear("bf16_relu", {4, 16}, 8, true, "relu", DType::kBF16), 3e-2));
  cases.push_back(linear("k1", {6, 1}, 9, true));
  cases.push_back(linear("n_odd", {10, 33}, 37, true, "gelu_tanh"));
  cases.push_back(linear("n1", {3, 7}, 1, true, "sigmoid"));
  cases.push_back(linear("m_empty", {0, 8}, 4, true));

  // W non-constant: no compile-time preparation.
  OpCase runtime_w = linear("runtime_weights", {2, 3, 8}, 12, true, "relu");
  runtime_w.constant_inputs = {false, false, false};
  cases.push_back(runtime_w);

  OpCase k_mismatch = linear("rejects_k_mismatch", {4, 8}, 6, true);
  k_mismatch.inputs[1] = rand(DType::kF32, {7, 6}, 30);
  cases.push_back(expect_failure(k_mismatch));
  OpCase bad_bias = linear("rejects_bias_shape", {4, 8}, 6, true);
  bad_bias.inputs[2] = rand(DType::kF32, {1, 6}, 31);
  cases.push_back(expect_failure(bad_bias));
  OpCase w_3d = linear("rejects_3d_weights", {4, 8}, 6, false);
  w_3d.inputs[1] = rand(DType::kF32, {1, 8, 6}, 32);
  cases.push_back(expect_failure(w_3d));
  OpCase scalar_x = linear("rejects_scalar_x", {8}, 6, false);
  scalar_x.inputs[0] = rand(DType::kF32, {}, 33);
  scalar_x.inputs[1] = rand(DType::kF32, {1, 6}, 34);
  cases.push_back(expect_failure(scalar_x));
  OpCase mixed = linear("rejects_mixed_dtypes", {4, 8}, 6, true);
  mixed.inputs[1] = rand(DType::kF16, {8, 6}, 35);
  cases.push_back(expect_failure(mixed));
}

// MatMul / Gemm whose B is a constant, as in a model's weights.
OpCase with_constant_b(OpCase c) {
  c.constant_inputs = {false, true, true};
  return c;
}

void add_constant_weight_cases(std::vector<OpCase>& cases) {
  cases.push_back(with_constant_b(make_case(
      "MatMul", "const_b_rank3",
      {rand(DType::kF32, {2, 7, 24}, 40), rand(DType::kF32, {24, 40}, 41)})));
  cases.push_back(with_constant_b(make_case(
      "MatMul", "const_b_vector_x",
      {rand(DType::kF32, {24}, 42), rand(DType::kF32, {24, 17}, 43)})));
  cases.push_back(with_constant_b(make_case(
      "MatMul", "const_b_batched_b",
      {rand(DType::kF32, {3, 4, 5}, 44), rand(DType::kF32, {3, 5, 6}, 45)})));
  cases.push_back(loosened(
      with_constant_b(make_case(
          "MatMul", "const_b_f16",
          {rand(DType::kF16, {5, 16}, 46), rand(DType::kF16, {16, 9}, 47)})),
      1e-2));
  cases.push_back(with_constant_b(
      make_case("Gemm", "const_b_bias_trans_b",
                {rand(DType::kF32, {6, 20}, 48),
                 rand(DType::kF32, {33, 20}, 49), rand(DType::kF32, {33}, 50)},
                {{"transB", 1}})));
  cases.push_back(with_constant_b(
      make_case("Gemm", "const_b_alpha_beta_full_c",
                {rand(DType::kF32, {20, 6}, 51), rand(DType::kF32, {20, 9}, 52),
                 rand(DType::kF32, {6, 9}, 53)},
                {{"transA", 1}, {"alpha", 0.5f}, {"beta", 2.0f}})));
  cases.push_back(with_constant_b(make_case(
      "Gemm", "const_b_no_c",
      {rand(DType::kF32, {4, 8}, 54), rand(DType::kF32, {8, 3}, 55)})));
}

}  // namespace

void add_linear_cases(std::vector<OpCase>& cases) {
  add_linear_op_cases(cases);
  add_constant_weight_cases(cases);
}

}  // namespace seqrt
