// seqrt::Attention cases (OPS.md "Attention"): Tq = Tk in {1, 17, 128,
// 1000}, d in {32, 64, 80, 128}, GQA ratios 1/4/8, decode after 999 cached
// keys, chunked prefill, windows 256 and 0 on lengths that are no multiple
// of a tile, fully masked rows, logits ~1e4, sigmoid scores with bias 0 and
// -ln T, a fixed-capacity cache (nonpad_kv_seqlen), half precision and bad
// inputs.
#include <cmath>
#include <limits>
#include <string>

#include "tests/conformance/op_case.h"

namespace seqrt {
namespace {

struct Sizes {
  int64_t b, hq, hkv, tq, tp, tk, d, dv;
};

// Inputs Q, K, V (and past_key/past_value when tp > 0); present outputs
// whenever there is a past.
std::vector<Tensor> qkv(const Sizes& s, uint64_t seed, DType dtype) {
  std::vector<Tensor> in = {
      random_tensor(dtype, {s.b, s.hq, s.tq, s.d}, seed),
      random_tensor(dtype, {s.b, s.hkv, s.tk, s.d}, seed + 1),
      random_tensor(dtype, {s.b, s.hkv, s.tk, s.dv}, seed + 2)};
  if (s.tp > 0) {
    in.push_back(Tensor());
    in.push_back(random_tensor(dtype, {s.b, s.hkv, s.tp, s.d}, seed + 3));
    in.push_back(random_tensor(dtype, {s.b, s.hkv, s.tp, s.dv}, seed + 4));
  }
  return in;
}

OpCase attention_case(const std::string& name, std::vector<Tensor> inputs,
                      AttrMap attrs, size_t num_outputs, double tolerance) {
  OpCase c = make_case("Attention", name, std::move(inputs), std::move(attrs),
                       num_outputs);
  c.domain = kSeqrtDomain;
  // f32 tiles and online softmax against the fp64 definition.
  return loosened(std::move(c), tolerance);
}

OpCase sized_case(const std::string& name, const Sizes& s, AttrMap attrs,
                  uint64_t seed, DType dtype = DType::kF32) {
  return attention_case(name, qkv(s, seed, dtype), std::move(attrs),
                        s.tp > 0 ? 3 : 1, dtype == DType::kF32 ? 1e-4 : 2e-2);
}

AttrMap causal() { return {{"is_causal", Attribute(int64_t{1})}}; }

void add_shapes(std::vector<OpCase>& cases) {
  cases.push_back(sized_case("t1_d32", {1, 2, 2, 1, 0, 1, 32, 32}, {}, 1));
  cases.push_back(
      sized_case("t17_d64_causal", {2, 4, 4, 17, 0, 17, 64, 64}, causal(), 2));
  cases.push_back(sized_case("t128_d80_gqa4_causal",
                             {1, 4, 1, 128, 0, 128, 80, 80}, causal(), 3));
  cases.push_back(
      sized_case("t128_d128_gqa8", {1, 8, 1, 128, 0, 128, 128, 64}, {}, 4));
  cases.push_back(sized_case("t1000_d64_causal",
                             {1, 1, 1, 1000, 0, 1000, 64, 64}, causal(), 5));
  cases.push_back(sized_case("dv_differs_scale_softcap",
                             {1, 2, 1, 40, 0, 40, 32, 24},
                             {{"scale", Attribute(2.0f)},
                              {"softcap", Attribute(3.0f)},
                              {"is_causal", Attribute(int64_t{1})}},
                             6));
  cases.push_back(sized_case("f16_causal_gqa4", {1, 4, 1, 33, 0, 33, 32, 32},
                             causal(), 7, DType::kF16));
}

void add_cache(std::vector<OpCase>& cases) {
  cases.push_back(sized_case("decode_tp999_gqa4", {1, 8, 2, 1, 999, 1, 64, 64},
                             causal(), 10));
  cases.push_back(sized_case("chunked_prefill_tq16_gqa4",
                             {2, 4, 1, 16, 100, 16, 32, 32}, causal(), 11));
  // A fixed-capacity cache of 300 keys holding 230 and 5 valid ones; the
  // invalid tail holds large values that must not leak into Y.
  Sizes s{2, 4, 2, 1, 0, 300, 32, 32};
  std::vector<Tensor> in = qkv(s, 12, DType::kF32);
  in[1] = random_tensor(DType::kF32, {2, 2, 300, 32}, 13, -30.0, 30.0);
  in.resize(7);
  in[6] = Tensor::from_vector<int64_t>({2}, {230, 5});
  cases.push_back(
      attention_case("nonpad_kv_seqlen_decode", in, causal(), 3, 1e-4));
  // The same with a past: the lengths count the concatenated keys.
  Sizes sp{2, 2, 2, 4, 90, 10, 16, 16};
  std::vector<Tensor> inp = qkv(sp, 14, DType::kF32);
  inp.resize(7);
  inp[6] = Tensor::from_vector<int64_t>({2}, {100, 37});
  cases.push_back(
      attention_case("nonpad_kv_seqlen_with_past", inp, causal(), 3, 1e-4));
}

void add_windows(std::vector<OpCase>& cases) {
  cases.push_back(sized_case("window256_causal_t300",
                             {1, 2, 1, 300, 0, 300, 32, 32},
                             {{"is_causal", Attribute(int64_t{1})},
                              {"window_left", Attribute(int64_t{256})}},
                             20));
  cases.push_back(sized_case("window0_causal_t77", {1, 2, 2, 77, 0, 77, 32, 32},
                             {{"is_causal", Attribute(int64_t{1})},
                              {"window_left", Attribute(int64_t{0})}},
                             21));
  cases.push_back(sized_case("window_left5_right7_t70",
                             {1, 2, 2, 70, 0, 70, 16, 16},
                             {{"window_left", Attribute(int64_t{5})},
                              {"window_right", Attribute(int64_t{7})}},
                             22));
}

void add_masks(std::vector<OpCase>& cases) {
  Sizes s{2, 2, 2, 19, 0, 70, 16, 16};
  std::vector<Tensor> in = qkv(s, 30, DType::kF32);
  Tensor mask = random_tensor(DType::kBool, {2, 1, 19, 70}, 31);
  for (int64_t b = 0; b < 2; ++b) {  // rows 4 and 11 see no key
    for (int64_t row : {4, 11}) {
      for (int64_t j = 0; j < 70; ++j) {
        mask.set_element_i64((b * 19 + row) * 70 + j, 0);
      }
    }
  }
  in.push_back(mask);
  cases.push_back(
      attention_case("bool_mask_fully_masked_rows", in, {}, 1, 1e-4));
  in.back() = random_tensor(DType::kF32, {19, 70}, 32, -4.0, 2.0);
  for (int64_t j = 0; j < 70; ++j) {
    in.back().set_element_f64(7 * 70 + j,
                              -std::numeric_limits<double>::infinity());
  }
  cases.push_back(
      attention_case("float_mask_inf_row_causal", in, causal(), 1, 1e-4));
  // Entries that are multiples of 1/8 in [16, 20]: q.k ~ 1e4 is exact in f32,
  // so the comparison sees only the softmax's handling of huge logits.
  std::vector<Tensor> big = qkv({1, 2, 1, 50, 0, 50, 32, 32}, 33, DType::kF32);
  for (int i = 0; i < 2; ++i) {
    for (int64_t e = 0; e < big[i].num_elements(); ++e) {
      double x = 18.0 + 2.0 * big[i].element_f64(e);
      big[i].set_element_f64(e, std::round(x * 8.0) / 8.0);
    }
  }
  cases.push_back(attention_case(
      "logits_1e4_causal", big,
      {{"scale", Attribute(1.0f)}, {"is_causal", Attribute(int64_t{1})}}, 1,
      1e-4));
  cases.push_back(attention_case(
      "logits_1e4_sigmoid", big,
      {{"scale", Attribute(1.0f)}, {"score", Attribute("sigmoid")}}, 1, 1e-4));
}

void add_sigmoid(std::vector<OpCase>& cases) {
  for (double bias : {0.0, -std::log(128.0)}) {
    AttrMap attrs{{"score", Attribute("sigmoid")},
                  {"sigmoid_bias", Attribute(static_cast<float>(bias))},
                  {"is_causal", Attribute(int64_t{1})}};
    cases.push_back(sized_case(
        bias == 0.0 ? "sigmoid_bias0_t128" : "sigmoid_bias_minus_ln_t128",
        {1, 4, 2, 128, 0, 128, 64, 64}, attrs, 40));
  }
  cases.push_back(sized_case(
      "sigmoid_decode_tp999", {1, 2, 1, 1, 999, 1, 32, 32},
      {{"score", Attribute("sigmoid")}, {"sigmoid_bias", Attribute(-6.9f)}},
      41));
}

void add_failures(std::vector<OpCase>& cases) {
  auto bad = [&](const std::string& name, std::vector<Tensor> in) {
    cases.push_back(expect_failure(attention_case(name, in, {}, 1, 1e-4)));
  };
  auto t = [](std::vector<int64_t> dims) {
    return random_tensor(DType::kF32, std::move(dims), 50);
  };
  bad("bad_heads_not_multiple",
      {t({1, 4, 2, 8}), t({1, 3, 2, 8}), t({1, 3, 2, 8})});
  bad("bad_head_size", {t({1, 2, 2, 8}), t({1, 2, 2, 6}), t({1, 2, 2, 8})});
  bad("bad_rank", {t({2, 2, 8}), t({1, 2, 2, 8}), t({1, 2, 2, 8})});
  bad("bad_mask_shape",
      {t({1, 2, 3, 8}), t({1, 2, 5, 8}), t({1, 2, 5, 8}), t({3, 4})});
  bad("bad_past_key_alone", {t({1, 2, 3, 8}), t({1, 2, 3, 8}), t({1, 2, 3, 8}),
                             Tensor(), t({1, 2, 4, 8})});
  bad("bad_nonpad_length",
      {t({1, 2, 1, 8}), t({1, 2, 5, 8}), t({1, 2, 5, 8}), Tensor(), Tensor(),
       Tensor(), Tensor::from_vector<int64_t>({1}, {6})});
}

}  // namespace

void add_attention_cases(std::vector<OpCase>& cases) {
  add_shapes(cases);
  add_cache(cases);
  add_windows(cases);
  add_masks(cases);
  add_sigmoid(cases);
  add_failures(cases);
}

}  // namespace seqrt
