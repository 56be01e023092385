// Highway's dynamic dispatch: the FMA loop is compiled once per target and
// the best one for this CPU runs.
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "bench/roofline.cc"
#include <hwy/foreach_target.h>
#include <hwy/highway.h>
// clang-format on

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "bench/roofline.h"

HWY_BEFORE_NAMESPACE();
namespace seqrt::bench::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// `iters` rounds of 10 independent FMA chains (enough to cover the FMA
// latency times the number of FMA ports); returns the flops done.
double FmaLoopImpl(int64_t iters, float* sink) {
  const hn::ScalableTag<float> d;
  auto a0 = hn::Set(d, 1.0f), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0,
       a6 = a0, a7 = a0, a8 = a0, a9 = a0;
  const auto m = hn::Set(d, 0.999999f), c = hn::Set(d, 1e-7f);
  for (int64_t i = 0; i < iters; ++i) {
    a0 = hn::MulAdd(a0, m, c);
    a1 = hn::MulAdd(a1, m, c);
    a2 = hn::MulAdd(a2, m, c);
    a3 = hn::MulAdd(a3, m, c);
    a4 = hn::MulAdd(a4, m, c);
    a5 = hn::MulAdd(a5, m, c);
    a6 = hn::MulAdd(a6, m, c);
    a7 = hn::MulAdd(a7, m, c);
    a8 = hn::MulAdd(a8, m, c);
    a9 = hn::MulAdd(a9, m, c);
  }
  auto sum = hn::Add(hn::Add(hn::Add(a0, a1), hn::Add(a2, a3)),
                     hn::Add(hn::Add(a4, a5), hn::Add(a6, a7)));
  sum = hn::Add(sum, hn::Add(a8, a9));
  *sink = hn::GetLane(sum);
  return static_cast<double>(iters) * 10.0 * 2.0 * hn::Lanes(d);
}

}  // namespace seqrt::bench::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace seqrt::bench {
HWY_EXPORT(FmaLoopImpl);

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

double measure_peak_gflops() {
  constexpr int64_t kIters = 20'000'000;
  double best = 0;
  for (int round = 0; round < 3; ++round) {
    double flops = 0;
    const auto start = std::chrono::steady_clock::now();
#pragma omp parallel reduction(+ : flops)
    {
      float sink = 0;
      flops += HWY_DYNAMIC_DISPATCH(FmaLoopImpl)(kIters, &sink);
      benchmark::DoNotOptimize(sink);
    }
    best = std::max(best, flops / seconds_since(start) / 1e9);
  }
  return best;
}

double measure_triad_gbs() {
  constexpr int64_t kN = int64_t{1} << 25;  // 128 MiB per array
  std::unique_ptr<float[]> a(new float[kN]), b(new float[kN]), c(new float[kN]);
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < kN; ++i) a[i] = b[i] = c[i] = 1.0f;
  double best = 0;
  for (int round = 0; round < 4; ++round) {
    const auto start = std::chrono::steady_clock::now();
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < kN; ++i) a[i] = b[i] + 0.5f * c[i];
    benchmark::DoNotOptimize(a.get());
    // Three arrays of traffic (the write-allocate read of `a` not counted,
    // as STREAM does).
    best =
        std::max(best, 3.0 * kN * sizeof(float) / seconds_since(start) / 1e9);
  }
  return best;
}

}  // namespace

const Roofline& roofline() {
  static const Roofline measured = [] {
    Roofline r;
    r.peak_gflops = measure_peak_gflops();
    r.triad_gbs = measure_triad_gbs();
    benchmark::AddCustomContext("roofline_peak_gflops",
                                std::to_string(r.peak_gflops));
    benchmark::AddCustomContext("roofline_triad_gbs",
                                std::to_string(r.triad_gbs));
    benchmark::AddCustomContext("threads",
                                std::to_string(omp_get_max_threads()));
    return r;
  }();
  return measured;
}

void report_flops(benchmark::State& state, double flops) {
  using benchmark::Counter;
  const double iters = static_cast<double>(state.iterations());
  state.counters["GFLOP/s"] = Counter(flops * iters / 1e9, Counter::kIsRate);
  state.counters["peak_frac"] =
      Counter(flops * iters / 1e9 / roofline().peak_gflops, Counter::kIsRate);
}

void report_bytes(benchmark::State& state, double bytes) {
  using benchmark::Counter;
  const double iters = static_cast<double>(state.iterations());
  state.counters["GB/s"] = Counter(bytes * iters / 1e9, Counter::kIsRate);
  state.counters["triad_frac"] =
      Counter(bytes * iters / 1e9 / roofline().triad_gbs, Counter::kIsRate);
}

void report_rate(benchmark::State& state, const char* name, double count) {
  state.counters[name] =
      benchmark::Counter(count * static_cast<double>(state.iterations()) / 1e9,
                         benchmark::Counter::kIsRate);
}

}  // namespace seqrt::bench
#endif  // HWY_ONCE
