// One decode step of a linear layer (x of M rows, one per sequence decoded
// together, times a K x N weight, bias and SiLU) on the Vulkan backend: the
// tiled GEMM, the GEMV shader, and the GEMV with the weight stored as fp16,
// beside the CPU backend on the same inputs in the same iterations
// (time_against_cpu); `weight_mib` is what the weight occupies on the device.
// Without a Vulkan device every benchmark is skipped with the reason.
#include <benchmark/benchmark.h>

#include <string>

#include "backends/vulkan/vulkan_backend.h"
#include "bench/vulkan_bench_util.h"
#include "compiler/infer/infer_graph.h"
#include "graph/builder.h"
#include "runtime/backend_registry.h"
#include "testing/random_tensor.h"

namespace seqrt {
namespace {

enum Variant { kTiledGemm = 0, kGemv = 1, kGemvFp16 = 2 };

Result<Graph> decode_linear(int64_t m, int64_t k, int64_t n) {
  GraphBuilder b("decode_linear");
  ValueId x = b.input("x", DType::kF32, Shape{m, k});
  ValueId w = b.constant("w", random_uniform_f32({k, n}, 1, -0.05f, 0.05f));
  ValueId bias = b.constant("b", random_uniform_f32({n}, 2));
  NodeOptions options;
  options.domain = kSeqrtDomain;
  b.output(b.add("Linear", {x, w, bias}, {{"activation", std::string("silu")}},
                 options),
           "y");
  SEQRT_ASSIGN_OR_RETURN(Graph graph, std::move(b).build());
  SEQRT_RETURN_IF_ERROR(infer_graph(graph));
  return graph;
}

// Arguments: variant, M, K, N.
void BM_DecodeLinear(benchmark::State& state) {
  const auto variant = static_cast<Variant>(state.range(0));
  const int64_t m = state.range(1), k = state.range(2), n = state.range(3);
  vulkan::VulkanOptions options;
  options.disable_gemv = variant == kTiledGemm;
  options.fp16_weights = variant == kGemvFp16;
  auto vulkan = create_vulkan_backend(options);
  if (!vulkan.is_ok()) {
    const std::string why = "no Vulkan device: " + vulkan.status().to_string();
    return state.SkipWithError(why.c_str());
  }
  auto cpu = create_backend("cpu");
  Result<Graph> graph = decode_linear(m, k, n);
  if (!cpu.is_ok() || !graph.is_ok()) {
    const Status& failed = cpu.is_ok() ? graph.status() : cpu.status();
    return state.SkipWithError(failed.to_string().c_str());
  }
  auto on_vulkan = (*vulkan)->compile(*graph, CompileOptions{});
  auto on_cpu = (*cpu)->compile(*graph, CompileOptions{});
  if (!on_vulkan.is_ok() || !on_cpu.is_ok()) {
    const Status& failed =
        on_vulkan.is_ok() ? on_cpu.status() : on_vulkan.status();
    return state.SkipWithError(failed.to_string().c_str());
  }
  const std::vector<Tensor> inputs = {random_uniform_f32({m, k}, 3)};
  time_against_cpu(state, **on_vulkan, **on_cpu, inputs);
  state.counters["weight_mib"] = static_cast<double>(k * n) *
                                 (variant == kGemvFp16 ? 2 : 4) /
                                 (1024.0 * 1024.0);
  state.SetLabel(variant == kTiledGemm ? "tiled GEMM"
                 : variant == kGemv    ? "GEMV"
                                       : "GEMV, fp16 weight");
}

BENCHMARK(BM_DecodeLinear)
    ->ArgNames({"variant", "M", "K", "N"})
    ->ArgsProduct(
        {{kTiledGemm, kGemv, kGemvFp16}, {1, 4}, {1024, 4096}, {1024}})
    ->Unit(benchmark::kMillisecond)
    ->UseManualTime();

}  // namespace
}  // namespace seqrt

BENCHMARK_MAIN();
