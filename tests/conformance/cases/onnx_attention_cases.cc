// ONNX Attention (opset 23/24) and TensorScatter (opset 24) cases.
#include <limits>

#include "tests/conformance/op_case.h"

namespace seqrt {
namespace {

Tensor lens(std::vector<int64_t> values) {
  int64_t n = static_cast<int64_t>(values.size());
  return Tensor::from_vector<int64_t>({n}, values);
}

Tensor rand_f32(std::vector<int64_t> dims, uint64_t seed) {
  return random_tensor(DType::kF32, std::move(dims), seed);
}

// Q (B,Hq,Tq,d), K (B,Hkv,Tk,d), V (B,Hkv,Tk,dv) of one dtype.
std::vector<Tensor> qkv(DType dtype, int64_t b, int64_t hq, int64_t hkv,
                        int64_t tq, int64_t tk, int64_t d, int64_t dv,
                        uint64_t seed) {
  return {random_tensor(dtype, {b, hq, tq, d}, seed),
          random_tensor(dtype, {b, hkv, tk, d}, seed + 1),
          random_tensor(dtype, {b, hkv, tk, dv}, seed + 2)};
}

void add_layout_cases(std::vector<OpCase>& cases) {
  cases.push_back(make_case("Attention", "onnx_mha_4d_cross",
                            qkv(DType::kF32, 2, 3, 3, 5, 7, 8, 6, 10)));
  cases.push_back(
      make_case("Attention", "onnx_gqa_3d_causal",
                {rand_f32({2, 6, 32}, 20), rand_f32({2, 6, 16}, 21),
                 rand_f32({2, 6, 12}, 22)},
                {{"q_num_heads", 4}, {"kv_num_heads", 2}, {"is_causal", 1}}));
  cases.push_back(
      make_case("Attention", "onnx_mqa_3d_cross_causal_top_left",
                {rand_f32({1, 3, 24}, 30), rand_f32({1, 7, 8}, 31),
                 rand_f32({1, 7, 8}, 32)},
                {{"q_num_heads", 3}, {"kv_num_heads", 1}, {"is_causal", 1}}));
  cases.push_back(make_case("Attention", "onnx_causal_33_d64_gqa4",
                            qkv(DType::kF32, 1, 4, 1, 33, 33, 64, 64, 40),
                            {{"is_causal", 1}}));
  cases.push_back(make_case("Attention", "onnx_scale_softcap",
                            qkv(DType::kF32, 1, 2, 2, 4, 9, 16, 16, 50),
                            {{"scale", 3.0f}, {"softcap", 2.5f}}));
  cases.push_back(loosened(
      make_case("Attention", "onnx_f16_gqa",
                qkv(DType::kF16, 2, 4, 2, 5, 5, 16, 8, 60), {{"is_causal", 1}}),
      2e-3));
  cases.push_back(
      loosened(make_case("Attention", "onnx_bf16_mha",
                         qkv(DType::kBF16, 1, 2, 2, 3, 6, 8, 8, 70)),
               2e-2));
}

void add_mask_and_cache_cases(std::vector<OpCase>& cases) {
  // Past cache with a float mask over Ttot, causal offset Tp.
  std::vector<Tensor> in = qkv(DType::kF32, 2, 4, 2, 3, 3, 8, 8, 80);
  in.push_back(rand_f32({3, 8}, 83));
  in.push_back(rand_f32({2, 2, 5, 8}, 84));
  in.push_back(rand_f32({2, 2, 5, 8}, 85));
  cases.push_back(make_case("Attention", "onnx_past_present_causal_mask", in,
                            {{"is_causal", 1}}, 3));
  // Decode: one query over a 31-key past, GQA ratio 4.
  std::vector<Tensor> dec = qkv(DType::kF32, 1, 8, 2, 1, 1, 32, 32, 90);
  dec.push_back(Tensor());
  dec.push_back(rand_f32({1, 2, 31, 32}, 93));
  dec.push_back(rand_f32({1, 2, 31, 32}, 94));
  cases.push_back(
      make_case("Attention", "onnx_decode_past31", dec, {{"is_causal", 1}}, 3));
  // A bool mask (B,1,Tq,L) shorter than Ttot, with a fully masked row.
  std::vector<Tensor> bm = qkv(DType::kF32, 2, 2, 2, 3, 6, 8, 4, 100);
  Tensor mask = random_tensor(DType::kBool, {2, 1, 3, 4}, 103, 0.0, 1.0);
  for (int64_t j = 0; j < 4; ++j) mask.set_element_f64(4 + j, 0.0);
  bm.push_back(mask);
  cases.push_back(
      make_case("Attention", "onnx_bool_mask_short_fully_masked", bm));
  // Fixed-capacity cache: nonpad lengths with causal (bottom-right aligned
  // to each batch's length) and a float mask.
  std::vector<Tensor> fc = qkv(DType::kF32, 2, 4, 2, 2, 9, 16, 16, 110);
  fc.push_back(rand_f32({2, 1, 1, 9}, 113));
  fc.push_back(Tensor());
  fc.push_back(Tensor());
  fc.push_back(lens({5, 9}));
  cases.push_back(make_case("Attention", "onnx_nonpad_causal_mask", fc,
                            {{"is_causal", 1}}));
  // qk_matmul_output in every mode, with past, mask and softcap.
  for (int64_t mode = 0; mode < 4; ++mode) {
    std::vector<Tensor> qk = qkv(DType::kF32, 1, 2, 1, 3, 2, 8, 8, 120);
    qk.push_back(rand_f32({1, 2, 3, 6}, 123));
    qk.push_back(rand_f32({1, 1, 4, 8}, 124));
    qk.push_back(rand_f32({1, 1, 4, 8}, 125));
    cases.push_back(make_case(
        "Attention", "onnx_qk_output_mode" + std::to_string(mode), qk,
        {{"qk_matmul_output_mode", mode}, {"softcap", 1.5f}, {"is_causal", 1}},
        4));
  }
}

void add_attention_failures(std::vector<OpCase>& cases) {
  cases.push_back(expect_failure(
      make_case("Attention", "onnx_heads_not_divisible",
                {rand_f32({1, 3, 2, 4}, 1), rand_f32({1, 2, 2, 4}, 2),
                 rand_f32({1, 2, 2, 4}, 3)})));
  cases.push_back(
      expect_failure(make_case("Attention", "onnx_packed_without_head_counts",
                               {rand_f32({1, 2, 8}, 1), rand_f32({1, 2, 8}, 2),
                                rand_f32({1, 2, 8}, 3)})));
  std::vector<Tensor> long_mask = qkv(DType::kF32, 1, 1, 1, 2, 3, 4, 4, 4);
  long_mask.push_back(rand_f32({2, 4}, 5));
  cases.push_back(expect_failure(
      make_case("Attention", "onnx_mask_longer_than_keys", long_mask)));
  std::vector<Tensor> bad_len = qkv(DType::kF32, 2, 1, 1, 2, 3, 4, 4, 6);
  bad_len.insert(bad_len.end(), {Tensor(), Tensor(), Tensor(), lens({1, 4})});
  cases.push_back(
      expect_failure(make_case("Attention", "onnx_nonpad_too_long", bad_len)));
  std::vector<Tensor> with_past = qkv(DType::kF32, 1, 1, 1, 2, 3, 4, 4, 7);
  with_past.insert(with_past.end(), {Tensor(), rand_f32({1, 1, 2, 4}, 8),
                                     rand_f32({1, 1, 2, 4}, 9), lens({3})});
  cases.push_back(expect_failure(
      make_case("Attention", "onnx_nonpad_with_past", with_past)));
}

void add_tensor_scatter_cases(std::vector<OpCase>& cases) {
  cases.push_back(make_case("TensorScatter", "linear_kv_cache",
                            {rand_f32({2, 3, 16, 8}, 200),
                             rand_f32({2, 3, 3, 8}, 201), lens({0, 13})}));
  cases.push_back(make_case(
      "TensorScatter", "circular_wrap",
      {rand_f32({2, 2, 8, 4}, 210), rand_f32({2, 2, 5, 4}, 211), lens({6, 11})},
      {{"mode", "circular"}}));
  cases.push_back(make_case("TensorScatter", "no_indices_axis1_f16",
                            {random_tensor(DType::kF16, {3, 6, 5}, 220),
                             random_tensor(DType::kF16, {3, 2, 5}, 221)},
                            {{"axis", 1}}));
  cases.push_back(make_case(
      "TensorScatter", "i32_last_axis",
      {random_tensor(DType::kI32, {2, 3, 7}, 230, -50, 50),
       random_tensor(DType::kI32, {2, 3, 1}, 231, -50, 50), lens({6, 0})},
      {{"axis", -1}}));
  cases.push_back(expect_failure(
      make_case("TensorScatter", "linear_overflow",
                {rand_f32({1, 4, 2}, 240), rand_f32({1, 2, 2}, 241), lens({3})},
                {{"axis", 1}})));
  cases.push_back(expect_failure(make_case(
      "TensorScatter", "batch_axis",
      {rand_f32({4, 2}, 250), rand_f32({1, 2}, 251)}, {{"axis", 0}})));
}

}  // namespace

void add_onnx_attention_cases(std::vector<OpCase>& cases) {
  add_layout_cases(cases);
  add_mask_and_cache_cases(cases);
  add_attention_failures(cases);
  add_tensor_scatter_cases(cases);
}

}  // namespace seqrt
