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
  Tensor u, delta, a, bm, cm, dskip, z, bias, state;
  std::vector<Tensor> inputs(bool dskip_on, bool z_on, bool bias_on,
                             bool state_on) const {
    return {u,
            delta,
            a,
            bm,
            cm,
            dskip_on ? dskip : Tensor(),
            z_on ? z : Tensor(),
            bias_on ? bias : Tensor(),
            state_on ? state : Tensor()};
  }
};

Problem random_problem(int64_t batch, int64_t channels, int64_t groups,
                       int64_t n, int64_t length, uint64_t seed,
                       double delta_lo = -3, double delta_hi = 1) {
  return Problem{
      uniform({batch, channels, length}, seed, -1, 1),
      uniform({batch, channels, length}, seed + 1, delta_lo, delta_hi),
      uniform({channels, n}, seed + 2, -2, -0.05),
      uniform({batch, groups, n, length}, seed + 3, -1, 1),
      uniform({batch, groups, n, length}, seed + 4, -1, 1),
      uniform({channels}, seed + 5, -1, 1),
      uniform({batch, channels, length}, seed + 6, -3, 3),
      uniform({channels}, seed + 7, -0.5, 0.5),
      uniform({batch, channels, n}, seed + 8, -1, 1)};
}

TEST(CpuSelectiveScan, MatchesReferenceAcrossShapes) {
  uint64_t seed = 100;
  for (int64_t n : {1, 5, 16, 33, 64}) {
    for (int64_t groups : {1, 2}) {
      for (int64_t length : {1, 7, 130}) {
        SCOPED_TRACE(testing::Message()
                     << "N=" << n << " G=" << groups << " L=" << length);
        Problem p = random_problem(2, 20, groups, n, length, seed += 10);
        expect_cpu_matches_reference(kSeqrtDomain, "SelectiveScan",
                                     p.inputs(true, true, true, true), {},
                                     2e-5);
        // Without softplus Δ must stay positive, or exp(ΔA) grows.
        p.delta = uniform(p.delta.dims(), seed + 9, 0.0, 1.0);
        expect_cpu_matches_reference(kSeqrtDomain, "SelectiveScan",
                                     p.inputs(false, false, false, false),
                                     {{"delta_softplus", 0}}, 2e-5);
      }
    }
  }
}

TEST(CpuSelectiveScan, ManyBlocksAndStretches) {
  // 18 channels per group: blocks of 8, 8 and 2 lanes; 300 steps cross
  // stretches of the time loop and end in a partial transpose tile.
  Problem p = random_problem(1, 36, 2, 40, 300, 61);
  expect_cpu_matches_reference(kSeqrtDomain, "SelectiveScan",
                               p.inputs(true, true, true, true), {}, 2e-5);
}

TEST(CpuSelectiveScan, LargeDeltaPassesThroughSoftplus) {
  // Δ in (18, 40): both sides of the threshold; small |A| keeps exp(ΔA)
  // away from 0 so the state still matters.
  Problem p = random_problem(1, 8, 1, 16, 40, 7, 18, 40);
  p.a = uniform({8, 16}, 3, -0.05, -0.001);
  expect_cpu_matches_reference(kSeqrtDomain, "SelectiveScan",
                               p.inputs(true, true, false, false), {}, 2e-5);
}

TEST(CpuSelectiveScan, HalfAndBfloat16Inputs) {
  Problem p = random_problem(1, 16, 2, 16, 20, 9);
  for (DType dtype : {DType::kF16, DType::kBF16}) {
    Problem q = p;
    q.u = uniform({1, 16, 20}, 9, -1, 1, dtype);
    q.z = uniform({1, 16, 20}, 15, -3, 3, dtype);
    expect_cpu_matches_reference(kSeqrtDomain, "SelectiveScan",
                                 q.inputs(true, true, true, true), {}, 1e-2);
  }
}

Result<std::vector<Tensor>> cpu_part(const Problem& p, int64_t begin,
                                     int64_t end, const Tensor& state) {
  return run_cpu(
      kSeqrtDomain, "SelectiveScan",
      {slice_axis(p.u, 2, begin, end), slice_axis(p.delta, 2, begin, end), p.a,
       slice_axis(p.bm, 3, begin, end), slice_axis(p.cm, 3, begin, end),
       p.dskip, slice_axis(p.z, 2, begin, end), p.bias, state});
}

TEST(CpuSelectiveScan, PrefillThenStepsEqualsWhole) {
  const int64_t prefill = 50, steps = 6, length = prefill + steps;
  Problem p = random_problem(2, 24, 2, 16, length, 31);
  auto whole = cpu_part(p, 0, length, p.state);
  ASSERT_TRUE(whole.is_ok()) << whole.status().to_string();
  auto first = cpu_part(p, 0, prefill, p.state);
  ASSERT_TRUE(first.is_ok());
  expect_close((*first)[0], slice_axis((*whole)[0], 2, 0, prefill), 1e-5);
  Tensor state = (*first)[1];
  for (int64_t t = prefill; t < length; ++t) {
    auto step = cpu_part(p, t, t + 1, state);
    ASSERT_TRUE(step.is_ok());
    expect_close((*step)[0], slice_axis((*whole)[0], 2, t, t + 1), 1e-5);
    state = (*step)[1];
  }
  expect_close(state, (*whole)[1], 1e-5, "state");
}

TEST(CpuSelectiveScan, BadShapesAreErrors) {
  Problem p = random_problem(1, 4, 1, 3, 5, 41);
  p.a = uniform({4, 2}, 1, -1, 0);
  auto out = run_cpu(kSeqrtDomain, "SelectiveScan",
                     p.inputs(false, false, false, false));
  ASSERT_FALSE(out.is_ok());
  EXPECT_NE(out.status().message().find("A must be (D,N) = (4,3), got (4,2)"),
            std::string::npos)
      << out.status().message();
}

}  // namespace
}  // namespace seqrt::cpu
