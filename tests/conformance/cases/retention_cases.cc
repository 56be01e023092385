// seqrt::Retention cases (OPS.md): sequence lengths around the chunk
// boundaries, chunk sizes 16/64/512, dk ≠ dv, continuation from a past
// state, 16 heads with the default decays, half precision, bad inputs.
#include <string>

#include "tests/conformance/op_case.h"

namespace seqrt {
namespace {

struct Shape4 {
  int64_t b, h, t, dk, dv;
};

OpCase retention_case(const std::string& name, Shape4 s, AttrMap attrs,
                      bool with_past, uint64_t seed,
                      DType dtype = DType::kF32) {
  std::vector<Tensor> inputs = {
      random_tensor(dtype, {s.b, s.h, s.t, s.dk}, seed),
      random_tensor(dtype, {s.b, s.h, s.t, s.dk}, seed + 1),
      random_tensor(dtype, {s.b, s.h, s.t, s.dv}, seed + 2),
      with_past ? random_tensor(dtype, {s.b, s.h, s.dk, s.dv}, seed + 3)
                : Tensor()};
  OpCase c =
      make_case("Retention", name, std::move(inputs), std::move(attrs), 2);
  c.domain = kSeqrtDomain;
  // f32 GEMMs against the fp64 recurrence.
  return loosened(std::move(c), dtype == DType::kF32 ? 1e-4 : 2e-2);
}

AttrMap chunk(int64_t size) { return {{"chunk_size", Attribute(size)}}; }

void add_lengths(std::vector<OpCase>& cases) {
  for (int64_t t : {1, 63, 64, 65, 1000}) {
    cases.push_back(retention_case("t" + std::to_string(t), {1, 2, t, 16, 8},
                                   chunk(64), false, t));
  }
  cases.push_back(
      retention_case("t4096_small", {1, 2, 4096, 4, 4}, chunk(64), false, 5));
  cases.push_back(
      retention_case("t65_chunk16", {2, 2, 65, 8, 12}, chunk(16), true, 6));
  cases.push_back(
      retention_case("t1000_chunk16", {1, 2, 1000, 8, 8}, chunk(16), true, 7));
  cases.push_back(retention_case("t1000_chunk512", {1, 2, 1000, 8, 8},
                                 chunk(512), true, 8));
  cases.push_back(
      retention_case("t63_chunk512", {1, 3, 63, 12, 4}, chunk(512), false, 9));
}

void add_attributes(std::vector<OpCase>& cases) {
  cases.push_back(
      retention_case("continuation_step", {2, 2, 1, 8, 16}, {}, true, 10));
  cases.push_back(retention_case("heads16_default_gammas", {1, 16, 200, 4, 4},
                                 {}, true, 11));
  cases.push_back(retention_case(
      "explicit_gammas_scale", {1, 3, 70, 8, 8},
      {{"gammas", Attribute(std::vector<float>{0.5f, 1.0f, 0.0f})},
       {"scale", Attribute(0.3f)},
       {"chunk_size", Attribute(int64_t{32})}},
      true, 12));
  cases.push_back(retention_case("f16", {1, 2, 80, 8, 8}, chunk(16), true, 13,
                                 DType::kF16));
  cases.push_back(
      retention_case("bf16", {1, 2, 20, 8, 8}, {}, false, 14, DType::kBF16));
}

void add_failures(std::vector<OpCase>& cases) {
  cases.push_back(expect_failure(retention_case(
      "bad_gamma_count", {1, 2, 4, 4, 4},
      {{"gammas", Attribute(std::vector<float>{0.5f})}}, false, 20)));
  cases.push_back(expect_failure(retention_case(
      "gamma_above_one", {1, 1, 4, 4, 4},
      {{"gammas", Attribute(std::vector<float>{1.5f})}}, false, 21)));
  cases.push_back(expect_failure(
      retention_case("chunk_zero", {1, 1, 4, 4, 4}, chunk(0), false, 22)));
  OpCase bad_v =
      retention_case("v_length_mismatch", {1, 1, 4, 4, 4}, {}, false, 23);
  bad_v.inputs[2] = random_tensor(DType::kF32, {1, 1, 5, 4}, 24);
  cases.push_back(expect_failure(std::move(bad_v)));
  OpCase bad_past =
      retention_case("past_state_shape", {1, 1, 4, 4, 4}, {}, true, 25);
  bad_past.inputs[3] = random_tensor(DType::kF32, {1, 1, 4, 5}, 26);
  cases.push_back(expect_failure(std::move(bad_past)));
}

}  // namespace

void add_retention_cases(std::vector<OpCase>& cases) {
  add_lengths(cases);
  add_attributes(cases);
  add_failures(cases);
}

}  // namespace seqrt
