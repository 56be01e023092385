// seqrt::SSD cases (OPS.md): lengths around the chunk sizes, state sizes
// and head sizes of real models, groups, both chunk hints, each optional
// input, Δ clamping, decay exponents > 0 (which the chunked form must not
// clamp), and shapes that must be rejected.
#include <string>

#include "tests/conformance/op_case.h"

namespace seqrt {
namespace {

struct SsdShape {
  int64_t batch = 1, length = 16, heads = 2, p = 32, groups = 1, n = 16;
  int64_t chunk = 256;
  bool options = true;  // D, z, dt_bias and past_state
  DType dtype = DType::kF32;
};

OpCase ssd_case(const std::string& name, const SsdShape& s,
                AttrMap attrs = {}) {
  const uint64_t seed = std::hash<std::string>{}(name);
  const int64_t b = s.batch, l = s.length, h = s.heads;
  std::vector<Tensor> inputs = {
      random_tensor(s.dtype, {b, l, h, s.p}, seed),
      random_tensor(s.dtype, {b, l, h}, seed + 1, -4.0, 0.0),
      random_tensor(DType::kF32, {h}, seed + 2, -3.0, -0.2),
      random_tensor(s.dtype, {b, l, s.groups, s.n}, seed + 3),
      random_tensor(s.dtype, {b, l, s.groups, s.n}, seed + 4)};
  if (s.options) {
    inputs.push_back(random_tensor(DType::kF32, {h}, seed + 5));
    inputs.push_back(random_tensor(s.dtype, {b, l, h, s.p}, seed + 6, -3, 3));
    inputs.push_back(random_tensor(DType::kF32, {h}, seed + 7, -0.5, 0.5));
    inputs.push_back(random_tensor(DType::kF32, {b, h, s.p, s.n}, seed + 8));
  }
  attrs["chunk_size"] = Attribute(s.chunk);
  OpCase c = make_case("SSD", name, std::move(inputs), std::move(attrs), 2);
  c.domain = kSeqrtDomain;
  return loosened(std::move(c), s.dtype == DType::kF32 ? 2e-4 : 2e-2);
}

SsdShape shape(int64_t length, int64_t n, int64_t p, int64_t groups,
               int64_t chunk) {
  SsdShape s;
  s.length = length;
  s.n = n;
  s.p = p;
  s.groups = groups;
  s.heads = 2 * groups;
  s.chunk = chunk;
  return s;
}

}  // namespace

void add_ssd_cases(std::vector<OpCase>& cases) {
  cases.push_back(ssd_case("L1_decode", shape(1, 128, 64, 1, 256)));
  cases.push_back(ssd_case("L127_N64_G2_c64", shape(127, 64, 32, 2, 64)));
  cases.push_back(ssd_case("L128_N16_P64_c64", shape(128, 16, 64, 1, 64)));
  cases.push_back(ssd_case("L129_N128_G2_c256", shape(129, 128, 32, 2, 256)));
  cases.push_back(ssd_case("L129_N16_c64", shape(129, 16, 32, 1, 64)));
  cases.push_back(ssd_case("L2049_N128_P64", shape(2049, 128, 64, 1, 256)));
  cases.push_back(ssd_case("L2049_N64_c64", shape(2049, 64, 32, 1, 64)));
  {
    SsdShape s = shape(130, 16, 32, 1, 64);
    s.options = false;
    s.batch = 2;
    cases.push_back(ssd_case("no_options_B2", s));
  }
  cases.push_back(ssd_case("dt_clamped", shape(100, 16, 32, 1, 64),
                           {{"dt_min", 0.05f}, {"dt_max", 0.3f}}));
  // No softplus and dt_min < 0: Δ·A > 0 on some tokens.
  cases.push_back(ssd_case("positive_exponents", shape(100, 16, 32, 1, 64),
                           {{"dt_softplus", int64_t{0}}, {"dt_min", -0.02f}}));
  for (DType dtype : {DType::kF16, DType::kBF16}) {
    SsdShape s = shape(70, 16, 32, 1, 64);
    s.dtype = dtype;
    cases.push_back(ssd_case(std::string("dtype_") + dtype_name(dtype), s));
  }
  {
    OpCase bad_a = ssd_case("bad_A_shape", shape(8, 16, 32, 1, 64));
    bad_a.inputs[2] = random_tensor(DType::kF32, {3}, 1, -1.0, 0.0);
    cases.push_back(expect_failure(bad_a));
    SsdShape s = shape(8, 16, 32, 1, 64);
    s.groups = 3;
    cases.push_back(expect_failure(ssd_case("H_not_multiple_of_G", s)));
    cases.push_back(
        expect_failure(ssd_case("chunk_size_0", shape(8, 16, 32, 1, 0))));
  }
}

}  // namespace seqrt
