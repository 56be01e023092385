// This machine's roofline, measured once per benchmark process: the fp32
// FMA peak and the triad bandwidth over every thread the kernels use. The
// benchmarks report their rates as fractions of these, so the figures stay
// meaningful on whichever machine runs them (the numbers in ENV.md were
// taken on another CPU).
#pragma once

#include <benchmark/benchmark.h>

namespace seqrt::bench {

struct Roofline {
  double peak_gflops = 0;  // fp32 FMA, all threads
  double triad_gbs = 0;    // a[i] = b[i] + s*c[i] over arrays beyond the LLC
};

// Measured on first use (about half a second), then cached.
const Roofline& roofline();

// Counters for `flops` floating-point operations per iteration: GFLOP/s and
// peak_frac (the fraction of roofline().peak_gflops).
void report_flops(benchmark::State& state, double flops);

// Counters for `bytes` moved per iteration: GB/s and triad_frac.
void report_bytes(benchmark::State& state, double bytes);

// A rate counter `name` of `count` events per iteration, in units of 1e9/s
// (e.g. "Gupdates/s").
void report_rate(benchmark::State& state, const char* name, double count);

}  // namespace seqrt::bench
