// seqrt::SelectiveScan cases (OPS.md): lengths around the vector and chunk
// sizes, every state size, groups, each optional input, Δ past softplus's
// threshold, a carried state, and shapes that must be rejected. D is small
// so the reference stays fast in Debug builds.
#include <string>

#include "tests/conformance/op_case.h"

namespace seqrt {
namespace {

struct ScanShape {
  int64_t batch = 1, channels = 4, groups = 1, n = 16, length = 16;
  bool dskip = true, z = true, delta_bias = true, past_state = false;
  double delta_lo = -3, delta_hi = 1;
  DType dtype = DType::kF32;
};

OpCase scan_case(const std::string& name, const ScanShape& s,
                 AttrMap attrs = {}) {
  const uint64_t seed = std::hash<std::string>{}(name);
  const int64_t b = s.batch, d = s.channels, l = s.length;
  std::vector<Tensor> inputs = {
      random_tensor(s.dtype, {b, d, l}, seed),
      random_tensor(s.dtype, {b, d, l}, seed + 1, s.delta_lo, s.delta_hi),
      random_tensor(DType::kF32, {d, s.n}, seed + 2, -2.0, -0.05),
      random_tensor(s.dtype, {b, s.groups, s.n, l}, seed + 3),
      random_tensor(s.dtype, {b, s.groups, s.n, l}, seed + 4),
      s.dskip ? random_tensor(DType::kF32, {d}, seed + 5) : Tensor(),
      s.z ? random_tensor(s.dtype, {b, d, l}, seed + 6, -3.0, 3.0) : Tensor(),
      s.delta_bias ? random_tensor(DType::kF32, {d}, seed + 7, -0.5, 0.5)
                   : Tensor(),
      s.past_state ? random_tensor(DType::kF32, {b, d, s.n}, seed + 8)
                   : Tensor()};
  OpCase c =
      make_case("SelectiveScan", name, std::move(inputs), std::move(attrs), 2);
  c.domain = kSeqrtDomain;
  // f32 kernels against the fp64 reference over up to 8192 steps.
  return loosened(std::move(c), s.dtype == DType::kF32 ? 1e-4 : 1e-2);
}

}  // namespace

void add_selective_scan_cases(std::vector<OpCase>& cases) {
  for (int64_t length : {1, 2, 127, 128, 129, 2047, 2048, 2049}) {
    ScanShape s;
    s.length = length;
    s.groups = length % 2 == 0 ? 2 : 1;
    cases.push_back(scan_case("L" + std::to_string(length), s));
  }
  {
    ScanShape s;
    s.channels = 2;
    s.length = 8192;
    s.z = false;
    cases.push_back(scan_case("L8192", s));
  }
  for (int64_t n : {1, 16, 64, 128, 256}) {
    ScanShape s;
    s.n = n;
    s.length = 65;
    s.batch = 2;
    s.groups = 2;
    s.past_state = true;
    cases.push_back(scan_case("N" + std::to_string(n) + "_G2_past", s));
  }
  {
    ScanShape s;
    s.dskip = s.z = s.delta_bias = false;
    s.length = 33;
    cases.push_back(scan_case("no_options", s));
    // Without softplus Δ must stay positive, or exp(ΔA) grows without
    // bound.
    s.delta_lo = 0.0;
    cases.push_back(
        scan_case("no_softplus", s, {{"delta_softplus", int64_t{0}}}));
  }
  {
    // Δ from 15 to 40: both sides of the softplus threshold.
    ScanShape s;
    s.delta_lo = 15;
    s.delta_hi = 40;
    s.delta_bias = false;
    cases.push_back(scan_case("delta_above_20", s));
  }
  for (DType dtype : {DType::kF16, DType::kBF16}) {
    ScanShape s;
    s.dtype = dtype;
    s.length = 40;
    s.past_state = true;
    cases.push_back(scan_case(std::string("dtype_") + dtype_name(dtype), s));
  }
  {
    ScanShape s;
    OpCase bad_a = scan_case("bad_A_shape", s);
    bad_a.inputs[2] = random_tensor(DType::kF32, {4, 8}, 1, -1.0, 0.0);
    cases.push_back(expect_failure(bad_a));
    s.groups = 3;
    cases.push_back(expect_failure(scan_case("D_not_multiple_of_G", s)));
    OpCase bad_dtype = scan_case("int_delta_bias", ScanShape{});
    bad_dtype.inputs[7] = random_tensor(DType::kI32, {4}, 1, 0.0, 3.0);
    cases.push_back(expect_failure(bad_dtype));
  }
}

}  // namespace seqrt
