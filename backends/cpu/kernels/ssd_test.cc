#include <gtest/gtest.h>

#include "backends/cpu/kernels/scan_kernel_test_util.h"

namespace seqrt::cpu {
namespace {

using scan_kernel_testing::expect_cpu_matches_reference;
using scan_kernel_testing::run_cpu;
using scan_testing::expect_close;
using scan_testing::slice_axis;
using scan_testing::uniform;

struct Problem {
  Tensor x, dt, a, bm, cm, d, z, bias, state;
  std::vector<Tensor> inputs(bool options) const {
    if (!options) return {x, dt, a, bm, cm};
    return {x, dt, a, bm, cm, d, z, bias, state};
  }
};

Problem random_problem(int64_t batch, int64_t length, int64_t heads, int64_t p,
                       int64_t groups, int64_t n, uint64_t seed) {
  return Problem{uniform({batch, length, heads, p}, seed, -1, 1),
                 uniform({batch, length, heads}, seed + 1, -4, 0),
                 uniform({heads}, seed + 2, -3, -0.2),
                 uniform({batch, length, groups, n}, seed + 3, -1, 1),
                 uniform({batch, length, groups, n}, seed + 4, -1, 1),
                 uniform({heads}, seed + 5, -1, 1),
                 uniform({batch, length, heads, p}, seed + 6, -3, 3),
                 uniform({heads}, seed + 7, -0.5, 0.5),
                 uniform({batch, heads, p, n}, seed + 8, -1, 1)};
}

TEST(CpuSsd, ChunkedAndRecurrentMatchReference) {
  uint64_t seed = 200;
  // L = 5 runs the recurrent form, the others the chunked one.
  for (int64_t length : {5, 40, 100}) {
    for (int64_t n : {5, 16, 32}) {
      for (int64_t chunk : {16, 64, 256}) {
        SCOPED_TRACE(testing::Message()
                     << "L=" << length << " N=" << n << " chunk=" << chunk);
        Problem p = random_problem(2, length, 4, 8, 2, n, seed += 10);
        expect_cpu_matches_reference(kSeqrtDomain, "SSD", p.inputs(true),
                                     {{"chunk_size", chunk}}, 1e-4);
        expect_cpu_matches_reference(kSeqrtDomain, "SSD", p.inputs(false),
                                     {{"chunk_size", chunk}}, 1e-4);
      }
    }
  }
}

TEST(CpuSsd, ManyHeadsOfOneGroupRunInParts) {
  // 16 heads sharing B and C: the group runs in parts of heads, each with
  // its own state GEMMs; two batch rows, a partial last chunk.
  for (int64_t chunk : {16, 64}) {
    SCOPED_TRACE(testing::Message() << "chunk=" << chunk);
    Problem p = random_problem(2, 150, 16, 8, 1, 32, 601);
    expect_cpu_matches_reference(kSeqrtDomain, "SSD", p.inputs(true),
                                 {{"chunk_size", chunk}}, 1e-4);
  }
}

TEST(CpuSsd, PositiveExponentsFallBackToRecurrence) {
  // dt_softplus off with dt_min < 0: Δ·A > 0 for some tokens, where the
  // chunked form's clamp would be wrong; the kernel must still match.
  Problem p = random_problem(1, 64, 2, 4, 1, 16, 301);
  AttrMap attrs{{"dt_softplus", 0}, {"dt_min", -1.0f}, {"dt_max", 1.0f}};
  p.dt = uniform({1, 64, 2}, 302, -0.02, 0.5);
  expect_cpu_matches_reference(kSeqrtDomain, "SSD", p.inputs(true), attrs,
                               1e-4);
}

Result<std::vector<Tensor>> cpu_part(const Problem& p, int64_t begin,
                                     int64_t end, const Tensor& state,
                                     int64_t chunk) {
  return run_cpu(
      kSeqrtDomain, "SSD",
      {slice_axis(p.x, 1, begin, end), slice_axis(p.dt, 1, begin, end), p.a,
       slice_axis(p.bm, 1, begin, end), slice_axis(p.cm, 1, begin, end), p.d,
       slice_axis(p.z, 1, begin, end), p.bias, state},
      {{"chunk_size", chunk}});
}

TEST(CpuSsd, ChunkedPrefillThenStepsEqualsWhole) {
  const int64_t prefill = 90, steps = 5, length = prefill + steps;
  Problem p = random_problem(1, length, 4, 16, 2, 32, 401);
  auto whole = cpu_part(p, 0, length, p.state, 32);
  ASSERT_TRUE(whole.is_ok()) << whole.status().to_string();
  // A different chunk hint must not change the result.
  auto other_chunk = cpu_part(p, 0, length, p.state, 128);
  ASSERT_TRUE(other_chunk.is_ok());
  expect_close((*other_chunk)[0], (*whole)[0], 1e-4, "chunk hint");
  auto first = cpu_part(p, 0, prefill, p.state, 64);
  ASSERT_TRUE(first.is_ok());
  expect_close((*first)[0], slice_axis((*whole)[0], 1, 0, prefill), 1e-4);
  Tensor state = (*first)[1];
  for (int64_t t = prefill; t < length; ++t) {
    auto step = cpu_part(p, t, t + 1, state, 64);
    ASSERT_TRUE(step.is_ok());
    expect_close((*step)[0], slice_axis((*whole)[0], 1, t, t + 1), 1e-4);
    state = (*step)[1];
  }
  expect_close(state, (*whole)[1], 1e-4, "state");
}

TEST(CpuSsd, HalfPrecisionInputs) {
  Problem p = random_problem(1, 50, 2, 8, 1, 16, 501);
  p.x = uniform({1, 50, 2, 8}, 502, -1, 1, DType::kF16);
  p.z = uniform({1, 50, 2, 8}, 503, -2, 2, DType::kBF16);
  expect_cpu_matches_reference(kSeqrtDomain, "SSD", p.inputs(true), {}, 2e-2);
}

}  // namespace
}  // namespace seqrt::cpu
