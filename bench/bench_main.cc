// main() of the kernel benchmarks: measures the roofline before the first
// benchmark, so that it is printed in the context and not timed inside one.
#include <benchmark/benchmark.h>

#include "bench/roofline.h"

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  seqrt::bench::roofline();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
