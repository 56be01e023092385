// Conformance cases of ops/linalg: MatMul (1-D promotion, batch
// broadcasting), Gemm (transposes, C broadcasting), Einsum (explicit and
// implicit outputs, diagonals, ellipsis) and Conv (1-D and 2-D, groups,
// auto_pad, strides, dilations), over the float dtypes and some integers.
#include <string>

#include "tests/conformance/op_case.h"

namespace seqrt {
namespace {

Tensor rand(DType dtype, std::vector<int64_t> dims, uint64_t seed) {
  if (is_integer(dtype))
    return random_tensor(dtype, std::move(dims), seed, -8, 8);
  return random_tensor(dtype, std::move(dims), seed);
}

void add_matmul_cases(std::vector<OpCase>& cases) {
  const char* op = "MatMul";
  cases.push_back(
      make_case(op, "f32_3x5_5x4",
                {rand(DType::kF32, {3, 5}, 1), rand(DType::kF32, {5, 4}, 2)}));
  cases.push_back(
      make_case(op, "f32_vector_matrix",
                {rand(DType::kF32, {7}, 3), rand(DType::kF32, {7, 2}, 4)}));
  cases.push_back(
      make_case(op, "f32_matrix_vector",
                {rand(DType::kF32, {2, 3, 7}, 5), rand(DType::kF32, {7}, 6)}));
  cases.push_back(make_case(
      op, "f32_dot", {rand(DType::kF32, {9}, 7), rand(DType::kF32, {9}, 8)}));
  cases.push_back(make_case(
      op, "f32_batch_broadcast",
      {rand(DType::kF32, {2, 1, 3, 4}, 9), rand(DType::kF32, {5, 4, 3}, 10)}));
  cases.push_back(make_case(
      op, "f64_batched",
      {rand(DType::kF64, {4, 2, 3}, 11), rand(DType::kF64, {4, 3, 5}, 12)}));
  cases.push_back(loosened(make_case(op, "f16_attention_scores",
                                     {rand(DType::kF16, {2, 4, 8}, 13),
                                      rand(DType::kF16, {2, 8, 4}, 14)}),
                           1e-2));
  cases.push_back(loosened(make_case(op, "bf16_1x16_16x3",
                                     {rand(DType::kBF16, {1, 16}, 15),
                                      rand(DType::kBF16, {16, 3}, 16)}),
                           3e-2));
  cases.push_back(make_case(
      op, "i32_2x3_3x2",
      {rand(DType::kI32, {2, 3}, 17), rand(DType::kI32, {3, 2}, 18)}));
  cases.push_back(make_case(
      op, "i64_batched",
      {rand(DType::kI64, {3, 2, 2}, 19), rand(DType::kI64, {2, 4}, 20)}));
  cases.push_back(expect_failure(make_case(
      op, "rejects_inner_mismatch",
      {rand(DType::kF32, {2, 3}, 21), rand(DType::kF32, {4, 2}, 22)})));
  cases.push_back(expect_failure(make_case(
      op, "rejects_batch_mismatch",
      {rand(DType::kF32, {2, 2, 3}, 23), rand(DType::kF32, {3, 3, 2}, 24)})));
}

void add_gemm_cases(std::vector<OpCase>& cases) {
  const char* op = "Gemm";
  cases.push_back(make_case(
      op, "f32_plain",
      {rand(DType::kF32, {3, 4}, 31), rand(DType::kF32, {4, 5}, 32)}));
  cases.push_back(
      make_case(op, "f32_bias_row",
                {rand(DType::kF32, {3, 4}, 33), rand(DType::kF32, {4, 5}, 34),
                 rand(DType::kF32, {5}, 35)},
                {{"alpha", 0.5f}, {"beta", 2.0f}}));
  cases.push_back(
      make_case(op, "f32_transposed_full_c",
                {rand(DType::kF32, {4, 3}, 36), rand(DType::kF32, {5, 4}, 37),
                 rand(DType::kF32, {3, 5}, 38)},
                {{"transA", 1}, {"transB", 1}}));
  cases.push_back(
      make_case(op, "f32_column_c",
                {rand(DType::kF32, {2, 6}, 39), rand(DType::kF32, {7, 6}, 40),
                 rand(DType::kF32, {2, 1}, 41)},
                {{"transB", 1}}));
  cases.push_back(
      make_case(op, "f64_scalar_c",
                {rand(DType::kF64, {3, 3}, 42), rand(DType::kF64, {3, 2}, 43),
                 Tensor::scalar<double>(1.5)}));
  cases.push_back(loosened(
      make_case(op, "f16_linear",
                {rand(DType::kF16, {4, 8}, 44), rand(DType::kF16, {6, 8}, 45),
                 rand(DType::kF16, {6}, 46)},
                {{"transB", 1}}),
      1e-2));
  cases.push_back(make_case(
      op, "i32_plain",
      {rand(DType::kI32, {2, 3}, 47), rand(DType::kI32, {3, 2}, 48)}));
  cases.push_back(expect_failure(
      make_case(op, "rejects_bad_c",
                {rand(DType::kF32, {2, 3}, 49), rand(DType::kF32, {3, 4}, 50),
                 rand(DType::kF32, {3}, 51)})));
  cases.push_back(expect_failure(make_case(
      op, "rejects_rank3",
      {rand(DType::kF32, {1, 2, 3}, 52), rand(DType::kF32, {3, 4}, 53)})));
}

void add_einsum_cases(std::vector<OpCase>& cases) {
  const char* op = "Einsum";
  auto eq = [](const char* text) { return AttrMap{{"equation", text}}; };
  cases.push_back(
      make_case(op, "matmul",
                {rand(DType::kF32, {3, 4}, 61), rand(DType::kF32, {4, 2}, 62)},
                eq("ij,jk->ik")));
  cases.push_back(make_case(op, "batched_attention",
                            {rand(DType::kF32, {2, 3, 5, 4}, 63),
                             rand(DType::kF32, {2, 3, 6, 4}, 64)},
                            eq("bhqd,bhkd->bhqk")));
  cases.push_back(make_case(op, "implicit_transpose",
                            {rand(DType::kF32, {3, 5}, 65)}, eq("ji")));
  cases.push_back(
      make_case(op, "trace", {rand(DType::kF64, {4, 4}, 66)}, eq("ii")));
  cases.push_back(make_case(op, "diagonal_batched",
                            {rand(DType::kF32, {2, 3, 3}, 67)}, eq("bii->bi")));
  cases.push_back(make_case(op, "sum_all", {rand(DType::kF32, {2, 3, 4}, 68)},
                            eq("ijk->")));
  cases.push_back(
      make_case(op, "outer_three",
                {rand(DType::kF32, {2}, 69), rand(DType::kF32, {3}, 70),
                 rand(DType::kF32, {4}, 71)},
                eq("i,j,k->kji")));
  cases.push_back(make_case(
      op, "ellipsis_broadcast",
      {rand(DType::kF32, {2, 1, 3, 4}, 72), rand(DType::kF32, {5, 4, 2}, 73)},
      eq("...ij,...jk->...ik")));
  cases.push_back(make_case(
      op, "implicit_ellipsis",
      {rand(DType::kF32, {2, 3, 4}, 74), rand(DType::kF32, {4, 5}, 75)},
      eq("...j,jk")));
  cases.push_back(
      make_case(op, "spaces_and_upper_case",
                {rand(DType::kF32, {2, 3}, 76), rand(DType::kF32, {3, 2}, 77)},
                eq("Ab, bC -> CA")));
  cases.push_back(loosened(
      make_case(op, "f16_bilinear",
                {rand(DType::kF16, {3, 4}, 78), rand(DType::kF16, {4, 4}, 79),
                 rand(DType::kF16, {3, 4}, 80)},
                eq("ni,ij,nj->n")),
      1e-2));
  cases.push_back(make_case(
      op, "chain_four",
      {rand(DType::kF32, {2, 3, 4}, 86), rand(DType::kF32, {4, 5}, 87),
       rand(DType::kF32, {5, 3}, 88), rand(DType::kF32, {3}, 89)},
      eq("bij,jk,kl,l->bi")));
  cases.push_back(make_case(
      op, "three_with_diagonal_and_ellipsis",
      {rand(DType::kF32, {3, 3}, 90), rand(DType::kF32, {2, 3, 4}, 91),
       rand(DType::kF32, {4, 2}, 92)},
      eq("ii,...ij,jk->...k")));
  cases.push_back(
      make_case(op, "i64_matvec",
                {rand(DType::kI64, {3, 4}, 81), rand(DType::kI64, {4}, 82)},
                eq("ij,j->i")));
  cases.push_back(expect_failure(
      make_case(op, "rejects_size_mismatch",
                {rand(DType::kF32, {2, 3}, 83), rand(DType::kF32, {4, 2}, 84)},
                eq("ij,jk->ik"))));
  cases.push_back(
      expect_failure(make_case(op, "rejects_unknown_output_label",
                               {rand(DType::kF32, {2, 3}, 85)}, eq("ij->ik"))));
}

void add_conv_cases(std::vector<OpCase>& cases) {
  const char* op = "Conv";
  using Ints = std::vector<int64_t>;
  cases.push_back(make_case(
      op, "1d_plain",
      {rand(DType::kF32, {2, 3, 9}, 91), rand(DType::kF32, {4, 3, 3}, 92)}));
  cases.push_back(
      make_case(op, "1d_causal_depthwise_bias",
                {rand(DType::kF32, {1, 4, 7}, 93),
                 rand(DType::kF32, {4, 1, 4}, 94), rand(DType::kF32, {4}, 95)},
                {{"group", 4}, {"pads", Ints{3, 0}}}));
  cases.push_back(make_case(
      op, "1d_stride_dilation",
      {rand(DType::kF32, {1, 2, 11}, 96), rand(DType::kF32, {3, 2, 3}, 97)},
      {{"strides", Ints{2}}, {"dilations", Ints{2}}}));
  cases.push_back(make_case(
      op, "2d_pads_strides",
      {rand(DType::kF32, {1, 3, 7, 6}, 98), rand(DType::kF32, {2, 3, 3, 3}, 99),
       rand(DType::kF32, {2}, 100)},
      {{"pads", Ints{1, 1, 1, 1}},
       {"strides", Ints{2, 2}},
       {"kernel_shape", Ints{3, 3}}}));
  cases.push_back(
      make_case(op, "2d_same_upper_stride",
                {rand(DType::kF32, {1, 2, 5, 5}, 101),
                 rand(DType::kF32, {2, 2, 2, 2}, 102)},
                {{"auto_pad", "SAME_UPPER"}, {"strides", Ints{2, 2}}}));
  cases.push_back(make_case(op, "2d_same_lower",
                            {rand(DType::kF32, {1, 1, 4, 5}, 103),
                             rand(DType::kF32, {1, 1, 2, 3}, 104)},
                            {{"auto_pad", "SAME_LOWER"}}));
  cases.push_back(make_case(op, "2d_valid_grouped",
                            {rand(DType::kF32, {2, 4, 5, 5}, 105),
                             rand(DType::kF32, {6, 2, 3, 3}, 106)},
                            {{"auto_pad", "VALID"}, {"group", 2}}));
  cases.push_back(make_case(op, "f64_2d_dilated",
                            {rand(DType::kF64, {1, 1, 7, 7}, 107),
                             rand(DType::kF64, {1, 1, 3, 3}, 108)},
                            {{"dilations", Ints{2, 3}}}));
  cases.push_back(loosened(make_case(op, "f16_1d",
                                     {rand(DType::kF16, {1, 3, 8}, 109),
                                      rand(DType::kF16, {2, 3, 3}, 110)},
                                     {{"pads", Ints{1, 1}}}),
                           1e-2));
  // Constant weights and bias: the CPU backend reorders them once at
  // compile time for oneDNN's convolution.
  OpCase constant_weights = make_case(
      op, "1d_depthwise_constant_weights",
      {rand(DType::kF32, {1, 16, 40}, 119), rand(DType::kF32, {16, 1, 4}, 120),
       rand(DType::kF32, {16}, 121)},
      {{"group", 16}, {"pads", Ints{3, 3}}});
  constant_weights.constant_inputs = {false, true, true};
  cases.push_back(constant_weights);
  OpCase constant_2d = make_case(op, "2d_constant_weights",
                                 {rand(DType::kF32, {1, 8, 12, 12}, 122),
                                  rand(DType::kF32, {16, 8, 3, 3}, 123)},
                                 {{"pads", Ints{1, 1, 1, 1}}});
  constant_2d.constant_inputs = {false, true};
  cases.push_back(constant_2d);
  cases.push_back(make_case(op, "3d",
                            {rand(DType::kF32, {1, 1, 3, 4, 4}, 111),
                             rand(DType::kF32, {2, 1, 2, 2, 2}, 112)}));
  cases.push_back(expect_failure(make_case(
      op, "rejects_channel_mismatch",
      {rand(DType::kF32, {1, 3, 5}, 113), rand(DType::kF32, {2, 2, 3}, 114)})));
  cases.push_back(expect_failure(make_case(
      op, "rejects_kernel_larger_than_input",
      {rand(DType::kF32, {1, 1, 2}, 115), rand(DType::kF32, {1, 1, 3}, 116)})));
  cases.push_back(expect_failure(make_case(
      op, "rejects_zero_stride",
      {rand(DType::kF32, {1, 1, 5}, 117), rand(DType::kF32, {1, 1, 3}, 118)},
      {{"strides", Ints{0}}})));
}

}  // namespace

void add_linalg_cases(std::vector<OpCase>& cases) {
  add_matmul_cases(cases);
  add_gemm_cases(cases);
  add_einsum_cases(cases);
  add_conv_cases(cases);
}

}  // namespace seqrt
