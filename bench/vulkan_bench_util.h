// Shared by the Vulkan benchmarks: one graph timed on the Vulkan backend and
// on the CPU backend in the same iterations.
#pragma once

#include <benchmark/benchmark.h>

#include <chrono>
#include <vector>

#include "backends/backend.h"

namespace seqrt {

// Warms both executables up (the first Vulkan run records the command
// buffer), then runs each once per iteration (the whole Executable::run:
// upload, the recorded command buffer, download). The reported (manual)
// time is Vulkan's; counters vulkan_ms, cpu_ms and vulkan_over_cpu compare
// the two. A failed run skips the benchmark with its error.
inline void time_against_cpu(benchmark::State& state, const Executable& vulkan,
                             const Executable& cpu,
                             const std::vector<Tensor>& inputs) {
  for (const Executable* executable : {&vulkan, &cpu}) {
    auto warm = executable->run(inputs);
    if (!warm.is_ok()) {
      return state.SkipWithError(warm.status().to_string().c_str());
    }
  }
  using Clock = std::chrono::steady_clock;
  double vulkan_s = 0, cpu_s = 0;
  for (auto _ : state) {
    auto t0 = Clock::now();
    auto got = vulkan.run(inputs);
    auto t1 = Clock::now();
    auto want = cpu.run(inputs);
    auto t2 = Clock::now();
    if (!got.is_ok() || !want.is_ok()) {
      const Status& failed = got.is_ok() ? want.status() : got.status();
      return state.SkipWithError(failed.to_string().c_str());
    }
    benchmark::DoNotOptimize(got->front().data());
    const double v = std::chrono::duration<double>(t1 - t0).count();
    vulkan_s += v;
    cpu_s += std::chrono::duration<double>(t2 - t1).count();
    state.SetIterationTime(v);
  }
  const double n = static_cast<double>(state.iterations());
  state.counters["vulkan_ms"] = 1e3 * vulkan_s / n;
  state.counters["cpu_ms"] = 1e3 * cpu_s / n;
  state.counters["vulkan_over_cpu"] = vulkan_s / cpu_s;
}

}  // namespace seqrt
