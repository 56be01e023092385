// A linear layer Y = X·W + b at the sizes of the compared models, two ways:
// - old:      what the CPU backend did before the primitive path: oneDNN's
//             dnnl_sgemm on the plain weights, then a separate bias add;
// - prepared: seqrt::Linear's CPU kernel as a compiled graph runs it: W
//             packed once by prepare(), a cached oneDNN matmul primitive
//             with the bias as an attribute (and, in `prepared_gelu`, GELU
//             as a post-op, which the old path would need one more pass for).
// Shapes: BERT-MiniLM (K=384, N=1536 and K=1536, N=384 at M=128 and 512)
// and GPT-2 small (K=768, N=3072 at M=1, one decode token, and M=512).
// Both write into one preallocated output, as the planned arena does.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "backends/cpu/kernel_table.h"
#include "backends/cpu/parallel.h"
#include "backends/cpu/simd/gemm.h"
#include "bench/roofline.h"
#include "graph/builder.h"
#include "ops/registry.h"
#include "testing/random_tensor.h"

namespace seqrt {
namespace {

struct Problem {
  int64_t m, k, n;
  Tensor x, w, b, y;
};

Problem make_problem(const benchmark::State& state) {
  Problem p{state.range(0), state.range(1), state.range(2)};
  p.x = random_uniform_f32({p.m, p.k}, 1);
  p.w = random_uniform_f32({p.k, p.n}, 2);
  p.b = random_uniform_f32({p.n}, 3);
  p.y = random_uniform_f32({p.m, p.n}, 4);  // touched once, before timing
  return p;
}

void old_path(benchmark::State& state) {
  Problem p = make_problem(state);
  const float* bias = p.b.data_as<float>();
  float* y = p.y.mutable_data_as<float>();
  for (auto _ : state) {
    cpu::sgemm(false, false, p.m, p.n, p.k, 1.0f, p.x.data_as<float>(), p.k,
               p.w.data_as<float>(), p.n, 0.0f, y, p.n);
    cpu::parallel_for(p.m, [&](int64_t i) {
      float* row = y + i * p.n;
      for (int64_t j = 0; j < p.n; ++j) row[j] += bias[j];
    });
    benchmark::DoNotOptimize(y);
  }
  bench::report_flops(state, 2.0 * p.m * p.k * p.n);
}

void prepared_path(benchmark::State& state, const std::string& activation) {
  Problem p = make_problem(state);
  GraphBuilder builder("linear");
  ValueId x = builder.input("x", DType::kF32, {p.m, p.k});
  NodeOptions options;
  options.domain = kSeqrtDomain;
  builder.output(
      builder.add("Linear",
                  {x, builder.constant("w", p.w), builder.constant("b", p.b)},
                  {{"activation", activation}}, options),
      "y");
  Result<Graph> graph = std::move(builder).build();
  const cpu::CpuKernel* kernel =
      cpu::kernel_table().find(kSeqrtDomain, "Linear");
  const OpSchema* schema = OpRegistry::global().find(kSeqrtDomain, "Linear");
  if (!graph.is_ok() || kernel == nullptr || !kernel->prepare) {
    state.SkipWithError("no prepared Linear kernel");
    return;
  }
  const Node& node = graph->nodes.front();
  Result<KernelFn> run = kernel->prepare(*graph, node);
  if (!run.is_ok()) {
    state.SkipWithError(run.status().to_string().c_str());
    return;
  }
  for (auto _ : state) {
    KernelContext ctx(node, *schema, {&p.x, &p.w, &p.b});
    ctx.set_output_placer(
        [&](size_t, DType, const std::vector<int64_t>&) { return p.y; });
    Status status = (*run)(ctx);
    if (!status.is_ok()) {
      state.SkipWithError(status.to_string().c_str());
      return;
    }
    benchmark::DoNotOptimize(ctx.outputs());
  }
  bench::report_flops(state, 2.0 * p.m * p.k * p.n);
}

void prepared(benchmark::State& state) { prepared_path(state, "none"); }
void prepared_gelu(benchmark::State& state) { prepared_path(state, "gelu"); }

// {M, K, N}: BERT-MiniLM's FFN up and down at seq 128 and 512, GPT-2's FFN
// up at one decode token and at a 512-token prompt.
void shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"M", "K", "N"});
  for (int64_t m : {128, 512}) {
    b->Args({m, 384, 1536});
    b->Args({m, 1536, 384});
  }
  b->Args({1, 768, 3072});
  b->Args({512, 768, 3072});
  b->Unit(benchmark::kMicrosecond)->UseRealTime();
}

// One decode token on dnnl_sgemm, serial as a node under the sleeping-team
// threshold runs (backends/cpu/node_threads.h), on the hf_gpt2/hf_llama
// layer sizes (K×N: qkv 256×768, MLP 256×1024 and 1024×256, the 8000-word
// head) and GPT-2 small's 768×3072: the weights' GB/s per call.
void decode_sgemm(benchmark::State& state) {
  Problem p = make_problem(state);
  cpu::ScopedThreads serial(1);
  for (auto _ : state) {
    cpu::sgemm(false, false, 1, p.n, p.k, 1.0f, p.x.data_as<float>(), p.k,
               p.w.data_as<float>(), p.n, 0.0f, p.y.mutable_data_as<float>(),
               p.n);
    benchmark::DoNotOptimize(p.y.mutable_data_as<float>());
  }
  bench::report_bytes(state, 4.0 * p.k * p.n);
}

void decode_shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"M", "K", "N"});
  for (auto [k, n] : std::vector<std::pair<int64_t, int64_t>>{
           {256, 768}, {256, 1024}, {1024, 256}, {256, 8000}, {768, 3072}}) {
    b->Args({1, k, n});
  }
  b->Unit(benchmark::kMicrosecond)->UseRealTime();
}

BENCHMARK(decode_sgemm)->Apply(decode_shapes);
BENCHMARK(old_path)->Apply(shapes);
BENCHMARK(prepared)->Apply(shapes);
BENCHMARK(prepared_gelu)->Apply(shapes);

}  // namespace
}  // namespace seqrt
