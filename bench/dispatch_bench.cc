// Per-node dispatch overhead of the CPU executor: a chain of N Relu nodes
// on a tensor small enough that the kernel itself is nearly free (16
// floats), compiled once and run repeatedly. The time per node at large N
// is what the executor adds around a kernel: schedule walk, output
// placement in the arena, kernel call, profiling hooks and thread
// governance. Issue "CPU speed" targets under 1 us per node.
//
// Arguments: N nodes, threads (0: the backend's default team).
// Counter per_node = run time / N, in seconds.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "graph/builder.h"
#include "testing/random_tensor.h"

namespace seqrt {
namespace {

constexpr int64_t kElements = 16;

Result<Graph> relu_chain(int64_t nodes) {
  GraphBuilder b("relu_chain");
  ValueId x = b.input("x", DType::kF32, Shape{kElements});
  for (int64_t i = 0; i < nodes; ++i) x = b.add("Relu", {x});
  b.output(x, "y");
  return std::move(b).build();
}

void BM_CpuDispatch_ReluChain(benchmark::State& state) {
  const int64_t nodes = state.range(0);
  Result<Graph> graph = relu_chain(nodes);
  if (!graph.is_ok()) {
    state.SkipWithError(graph.status().to_string().c_str());
    return;
  }
  std::unique_ptr<Backend> backend = create_cpu_backend();
  CompileOptions options;
  options.num_threads = static_cast<int>(state.range(1));
  Result<std::unique_ptr<Executable>> executable =
      backend->compile(*graph, options);
  if (!executable.is_ok()) {
    state.SkipWithError(executable.status().to_string().c_str());
    return;
  }
  const Tensor x = random_uniform_f32({kElements}, 7);
  for (auto _ : state) {
    Result<std::vector<Tensor>> out = (*executable)->run({x});
    if (!out.is_ok()) {
      state.SkipWithError(out.status().to_string().c_str());
      return;
    }
    benchmark::DoNotOptimize(out->front().data());
  }
  // Seconds per node, printed with an SI prefix ("350n" is 350 ns).
  state.counters["per_node"] =
      benchmark::Counter(static_cast<double>(nodes),
                         benchmark::Counter::kIsIterationInvariantRate |
                             benchmark::Counter::kInvert);
}
BENCHMARK(BM_CpuDispatch_ReluChain)
    ->ArgNames({"nodes", "threads"})
    ->ArgsProduct({{1, 64, 512}, {1, 0}})
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace seqrt

BENCHMARK_MAIN();
