// The SwiGLU gate silu(h)·g = h·σ(h)·g on [512, 3072] f32 through a CPU
// Session: unfused (optimize off: Sigmoid, Mul, Mul run one after another,
// each a pass over memory) against fused (optimize on: one
// seqrt::FusedElementwise node, one pass). GB/s counts the bytes the fused
// form must move: h and g read once, y written once. BM_SiluGate_Kernel
// times the prepared CPU kernel alone, writing into one output buffer
// reused across iterations, to separate the kernel from what a Session run
// adds (allocating and first-touching the output, binding).
#include <benchmark/benchmark.h>

#include "backends/cpu/kernel_table.h"
#include "bench/roofline.h"
#include "compiler/passes/passes.h"
#include "graph/builder.h"
#include "ops/registry.h"
#include "runtime/session.h"
#include "testing/random_tensor.h"

namespace seqrt {
namespace {

constexpr int64_t kRows = 512, kCols = 3072;

Tensor uniform(std::vector<int64_t> dims, uint32_t seed) {
  return random_uniform_f32(std::move(dims), seed, -4.0f, 4.0f);
}

Result<Graph> silu_gate() {
  GraphBuilder b("silu_gate");
  ValueId h = b.input("h", DType::kF32, {kRows, kCols});
  ValueId g = b.input("g", DType::kF32, {kRows, kCols});
  ValueId silu = b.add("Mul", {h, b.add("Sigmoid", {h})});
  b.output(b.add("Mul", {silu, g}), "y");
  return std::move(b).build();
}

// Argument: 1 runs the graph passes (the fused kernel), 0 runs it as built.
void BM_SiluGate_Cpu(benchmark::State& state) {
  Result<Graph> graph = silu_gate();
  if (!graph.is_ok()) {
    return state.SkipWithError(graph.status().message().c_str());
  }
  SessionOptions options;
  options.backend = "cpu";
  options.optimize = state.range(0) != 0;
  auto session = Session::create(std::move(graph).value(), options);
  if (!session.is_ok()) {
    return state.SkipWithError(session.status().message().c_str());
  }
  const std::map<std::string, Tensor> feeds = {
      {"h", uniform({kRows, kCols}, 1)}, {"g", uniform({kRows, kCols}, 2)}};
  for (auto _ : state) {
    auto outputs = (*session)->run(feeds);
    if (!outputs.is_ok()) {
      return state.SkipWithError(outputs.status().message().c_str());
    }
    benchmark::DoNotOptimize(outputs->at("y").data());
  }
  state.counters["nodes"] =
      static_cast<double>((*session)->graph().nodes.size());
  bench::report_bytes(state, 3.0 * kRows * kCols * sizeof(float));
}
BENCHMARK(BM_SiluGate_Cpu)
    ->ArgName("fused")
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// The fused node of the optimised graph, run by its prepared CPU kernel.
void BM_SiluGate_Kernel(benchmark::State& state) {
  Result<Graph> graph = silu_gate();
  Result<std::vector<PassStats>> stats =
      graph.is_ok() ? optimize_graph(*graph) : graph.status();
  if (!stats.is_ok() || graph->nodes.size() != 1) {
    return state.SkipWithError("the SiLU gate did not fuse into one node");
  }
  const Node& node = graph->nodes[0];
  const cpu::CpuKernel* kernel = cpu::kernel_table().find(node.domain, node.op);
  Result<KernelFn> run = kernel->prepare(*graph, node);
  if (!run.is_ok()) return state.SkipWithError(run.status().message().c_str());
  const OpSchema* schema = OpRegistry::global().find(node.domain, node.op);
  Tensor h = uniform({kRows, kCols}, 1);
  Tensor g = uniform({kRows, kCols}, 2);
  Tensor y = uniform({kRows, kCols}, 3);  // touched once, reused
  for (auto _ : state) {
    KernelContext ctx(node, *schema, {&h, &g});
    ctx.set_output_placer(
        [&y](size_t, DType, const std::vector<int64_t>&) { return y; });
    Status status = (*run)(ctx);
    if (!status.is_ok()) return state.SkipWithError(status.message().c_str());
    benchmark::DoNotOptimize(ctx.outputs()[0].data());
  }
  bench::report_bytes(state, 3.0 * kRows * kCols * sizeof(float));
}
BENCHMARK(BM_SiluGate_Kernel)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace seqrt
