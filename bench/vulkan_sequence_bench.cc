// The sequence ops on the Vulkan backend against the CPU backend: each
// benchmark compiles one single-node graph on both backends and, in every
// iteration, runs it once on each (whole Executable::run: upload, the
// recorded command buffer, download). The reported time is Vulkan's;
// `cpu_ms`, `vulkan_ms` and `vulkan_over_cpu` compare the two over the same
// iterations. Shapes are small enough for lavapipe (Mesa's CPU driver);
// without a Vulkan device every benchmark is skipped with the reason.
#include <benchmark/benchmark.h>

#include <functional>
#include <string>

#include "backends/vulkan/vulkan_backend.h"
#include "bench/vulkan_bench_util.h"
#include "compiler/infer/infer_graph.h"
#include "graph/builder.h"
#include "runtime/backend_registry.h"
#include "testing/random_tensor.h"

namespace seqrt {
namespace {

struct Spec {
  std::string op;
  std::vector<std::vector<int64_t>> dims;  // {} = an absent optional input
  AttrMap attrs;
  size_t num_outputs = 1;
  std::string domain = kSeqrtDomain;
};

Tensor uniform(const std::vector<int64_t>& dims, uint32_t seed, float lo,
               float hi) {
  return random_uniform_f32(dims, seed, lo, hi);
}

Result<Graph> single_node(const Spec& spec) {
  GraphBuilder b(spec.op);
  std::vector<ValueId> inputs;
  for (size_t i = 0; i < spec.dims.size(); ++i) {
    if (spec.dims[i].empty()) {
      inputs.push_back(kNoValue);
      continue;
    }
    inputs.push_back(b.input("in" + std::to_string(i), DType::kF32,
                             Shape::from_dims(spec.dims[i])));
  }
  NodeOptions options;
  options.domain = spec.domain;
  for (ValueId out :
       b.add_node(spec.op, inputs, spec.attrs, spec.num_outputs, options)) {
    b.output(out);
  }
  SEQRT_ASSIGN_OR_RETURN(Graph graph, std::move(b).build());
  SEQRT_RETURN_IF_ERROR(infer_graph(graph));
  return graph;
}

// Inputs in [lo, hi) per input index (gates and decays need their ranges).
using Ranges = std::function<std::pair<float, float>(size_t)>;

void run_both(benchmark::State& state, const Spec& spec, const Ranges& range,
              const vulkan::VulkanOptions& options = {}) {
  Result<Graph> graph = single_node(spec);
  if (!graph.is_ok())
    return state.SkipWithError(graph.status().to_string().c_str());
  auto vulkan = create_vulkan_backend(options);
  if (!vulkan.is_ok()) {
    const std::string why = "no Vulkan device: " + vulkan.status().to_string();
    return state.SkipWithError(why.c_str());
  }
  auto cpu = create_backend("cpu");
  if (!cpu.is_ok())
    return state.SkipWithError(cpu.status().to_string().c_str());
  auto on_vulkan = (*vulkan)->compile(*graph, CompileOptions{});
  auto on_cpu = (*cpu)->compile(*graph, CompileOptions{});
  if (!on_vulkan.is_ok() || !on_cpu.is_ok()) {
    const Status& failed =
        on_vulkan.is_ok() ? on_cpu.status() : on_vulkan.status();
    return state.SkipWithError(failed.to_string().c_str());
  }
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < spec.dims.size(); ++i) {
    if (spec.dims[i].empty()) continue;
    auto [lo, hi] = range(i);
    inputs.push_back(
        uniform(spec.dims[i], static_cast<uint32_t>(i + 1), lo, hi));
  }
  time_against_cpu(state, **on_vulkan, **on_cpu, inputs);
}

std::pair<float, float> unit(size_t) { return {-1.0f, 1.0f}; }

// The first argument of the benchmarks that compare forms: 1 the chunked
// forms (even where the planner would not take them), 0 the recurrent.
vulkan::VulkanOptions forms_from(int64_t chunked) {
  vulkan::VulkanOptions options;
  options.forms = chunked == 0 ? vulkan::SequenceForms::kRecurrent
                               : vulkan::SequenceForms::kChunked;
  return options;
}

// B=1, H=4, d=64: a causal prefill of 128 tokens, and one token decoded
// over a cache of 256 keys.
void BM_Attention_Prefill(benchmark::State& state) {
  const std::vector<int64_t> qkv = {1, 4, 128, 64};
  run_both(state,
           {"Attention", {qkv, qkv, qkv}, {{"is_causal", int64_t{1}}}, 1},
           unit);
}
void BM_Attention_Decode(benchmark::State& state) {
  const std::vector<int64_t> one = {1, 4, 1, 64}, past = {1, 4, 256, 64};
  run_both(state,
           {"Attention",
            {one, one, one, {}, past, past},
            {{"is_causal", int64_t{1}}},
            3},
           unit);
}

// Retention B=1, H=4, T=128, dk=dv=32 (chunkwise, chunk 64).
void BM_Retention(benchmark::State& state) {
  const std::vector<int64_t> qkv = {1, 4, 128, 32};
  run_both(state, {"Retention", {qkv, qkv, qkv}, {}, 1}, unit);
}

// Gated LinearAttention (ONNX domain) B=1, T=128, 4 heads of dk=dv=32.
void BM_LinearAttention(benchmark::State& state) {
  const std::vector<int64_t> qkv = {1, 128, 4 * 32};
  run_both(state,
           {"LinearAttention",
            {qkv, qkv, qkv, {}, {1, 128, 4}},
            {{"update_rule", std::string("gated")},
             {"q_num_heads", int64_t{4}},
             {"kv_num_heads", int64_t{4}}},
            1,
            kOnnxDomain},
           [](size_t i) {
             return i == 4 ? std::pair{-0.5f, 0.0f} : std::pair{-0.35f, 0.35f};
           });
}

// gated_delta LinearAttention B=1, 4 heads of dk=dv=32, a decay per head.
// Arguments: chunked (1) or the recurrent form only (0), T.
void BM_LinearAttentionDelta(benchmark::State& state) {
  const int64_t t = state.range(1);
  const std::vector<int64_t> qkv = {1, t, 4 * 32}, gate = {1, t, 4};
  const vulkan::VulkanOptions options = forms_from(state.range(0));
  run_both(
      state,
      {"LinearAttention",
       {qkv, qkv, qkv, {}, gate, gate},
       {{"update_rule", std::string("gated_delta")},
        {"q_num_heads", int64_t{4}},
        {"kv_num_heads", int64_t{4}}},
       1,
       kOnnxDomain},
      [](size_t i) {
        switch (i) {
          case 1:  // small keys keep the delta updates contracting
            return std::pair{-0.1f, 0.1f};
          case 4:
            return std::pair{-0.5f, 0.0f};
          case 5:
            return std::pair{0.1f, 0.9f};
          default:
            return std::pair{-0.35f, 0.35f};
        }
      },
      options);
}

// SelectiveScan B=1, D=256, L=256, N=16.
void BM_SelectiveScan(benchmark::State& state) {
  run_both(state,
           {"SelectiveScan",
            {{1, 256, 256},
             {1, 256, 256},
             {256, 16},
             {1, 1, 16, 256},
             {1, 1, 16, 256}},
            {},
            1},
           [](size_t i) {
             return i == 2 ? std::pair{-2.0f, -0.05f} : std::pair{-1.0f, 1.0f};
           });
}

// SSD B=1, L=256, H=4, P=32, N=32.
void BM_SSD(benchmark::State& state) {
  run_both(
      state,
      {"SSD",
       {{1, 256, 4, 32}, {1, 256, 4}, {4}, {1, 256, 1, 32}, {1, 256, 1, 32}},
       {},
       1},
      [](size_t i) {
        return i == 1   ? std::pair{-4.0f, 0.0f}
               : i == 2 ? std::pair{-3.0f, -0.2f}
                        : std::pair{-1.0f, 1.0f};
      });
}

// NeuralMemory B=1, H=2, depth 2. Arguments: chunk-parallel (1) or the
// token loop only (0), T, d, m, chunk_size.
void BM_NeuralMemory(benchmark::State& state) {
  const int64_t t = state.range(1), d = state.range(2), m = state.range(3);
  const std::vector<int64_t> seq4 = {1, 2, t, d}, seq3 = {1, 2, t};
  const vulkan::VulkanOptions options = forms_from(state.range(0));
  run_both(
      state,
      {"NeuralMemory",
       {seq4, seq4, seq4, seq3, seq3, seq3, {2, d, m}, {2, m, d}},
       {{"chunk_size", state.range(4)}},
       1},
      [d](size_t i) {
        switch (i) {
          case 3:  // learning rates scaled to the key width: stable
            return std::pair{0.0f, 1.6f / static_cast<float>(d)};
          case 4:
            return std::pair{0.5f, 0.95f};
          case 5:
            return std::pair{0.0f, 0.1f};
          case 6:
          case 7:
            return std::pair{-0.15f, 0.15f};
          default:
            return std::pair{-0.35f, 0.35f};
        }
      },
      options);
}

#define SEQRT_VULKAN_BENCH(fn) \
  BENCHMARK(fn)->Unit(benchmark::kMillisecond)->UseManualTime()
SEQRT_VULKAN_BENCH(BM_Attention_Prefill);
SEQRT_VULKAN_BENCH(BM_Attention_Decode);
SEQRT_VULKAN_BENCH(BM_Retention);
SEQRT_VULKAN_BENCH(BM_LinearAttention);
SEQRT_VULKAN_BENCH(BM_LinearAttentionDelta)
    ->ArgNames({"chunked", "T"})
    ->Args({1, 256})
    ->Args({0, 256})
    ->Args({1, 1024})
    ->Args({0, 1024});
SEQRT_VULKAN_BENCH(BM_SelectiveScan);
SEQRT_VULKAN_BENCH(BM_SSD);
SEQRT_VULKAN_BENCH(BM_NeuralMemory)
    ->ArgNames({"chunked", "T", "d", "m", "chunk"})
    ->Args({1, 64, 32, 64, 16})
    ->Args({0, 64, 32, 64, 16})
    ->Args({1, 256, 64, 128, 64})
    ->Args({0, 256, 64, 128, 64})
    ->Args({1, 256, 32, 64, 16})
    ->Args({0, 256, 32, 64, 16});

}  // namespace
}  // namespace seqrt

BENCHMARK_MAIN();
