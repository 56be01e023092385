// CPU Retention and LinearAttention: prefill of T = 2048 tokens with H = 8
// heads and d_k = d_v = 64 in each form (chunkwise, recurrent), and one
// decode step from a carried state. Items are tokens·heads.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "backends/cpu/kernels/linear_attention.h"
#include "backends/cpu/kernels/retention.h"
#include "ops/registry.h"

namespace seqrt::cpu {
namespace {

constexpr int64_t kHeads = 8, kDk = 64, kDv = 64;

Tensor random_f32(std::vector<int64_t> dims, uint64_t seed, float lo = -1.0f,
                  float hi = 1.0f) {
  Tensor t = Tensor::allocate(DType::kF32, std::move(dims)).value();
  float* data = t.mutable_data_as<float>();
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    float u = static_cast<float>(x >> 40) / static_cast<float>(1 << 24);
    data[i] = lo + (hi - lo) * u;
  }
  return t;
}

// One node of `op` over `inputs`, run by `kernel` once per iteration.
template <typename Kernel>
void run_node(benchmark::State& state, const std::string& domain,
              const std::string& op, const std::vector<Tensor>& inputs,
              const AttrMap& attrs, Kernel kernel, int64_t tokens) {
  const OpSchema* schema = OpRegistry::global().find(domain, op);
  Node node;
  node.name = "bench";
  node.op = op;
  node.domain = domain;
  node.attrs = attrs;
  std::vector<const Tensor*> args;
  for (size_t i = 0; i < inputs.size(); ++i) {
    node.inputs.push_back(inputs[i].empty() ? kNoValue
                                            : static_cast<ValueId>(i));
    args.push_back(inputs[i].empty() ? nullptr : &inputs[i]);
  }
  node.outputs = {100, 101};
  for (auto _ : state) {
    KernelContext ctx(node, *schema, args);
    Status status = kernel(ctx);
    if (!status.is_ok()) {
      state.SkipWithError(status.message().c_str());
      return;
    }
    benchmark::DoNotOptimize(ctx.outputs()[0].data());
  }
  state.SetItemsProcessed(state.iterations() * tokens * kHeads);
}

void retention(benchmark::State& state, int64_t t,
               std::optional<ScanForm> form) {
  std::vector<Tensor> inputs = {
      random_f32({1, kHeads, t, kDk}, 1), random_f32({1, kHeads, t, kDk}, 2),
      random_f32({1, kHeads, t, kDv}, 3), random_f32({1, kHeads, kDk, kDv}, 4)};
  run_node(
      state, kSeqrtDomain, "Retention", inputs, {},
      [form](KernelContext& ctx) { return run_retention_cpu(ctx, form); }, t);
}

void linear_attention(benchmark::State& state, const std::string& rule,
                      int64_t t, std::optional<ScanForm> form) {
  std::vector<Tensor> inputs = {
      random_f32({1, t, kHeads * kDk}, 1),
      random_f32({1, t, kHeads * kDk}, 2, -0.1f, 0.1f),
      random_f32({1, t, kHeads * kDv}, 3),
      random_f32({1, kHeads, kDk, kDv}, 4),
      random_f32({1, t, kHeads}, 5, -0.2f, 0.0f),
      random_f32({1, t, kHeads}, 6, 0.0f, 1.0f)};
  AttrMap attrs = {{"update_rule", Attribute(rule)},
                   {"q_num_heads", Attribute(kHeads)},
                   {"kv_num_heads", Attribute(kHeads)}};
  run_node(
      state, kOnnxDomain, "LinearAttention", inputs, attrs,
      [form](KernelContext& ctx) {
        return run_linear_attention_cpu(ctx, form);
      },
      t);
}

void BM_RetentionPrefill_Chunkwise(benchmark::State& s) {
  retention(s, 2048, ScanForm::kChunkwise);
}
void BM_RetentionPrefill_Recurrent(benchmark::State& s) {
  retention(s, 2048, ScanForm::kRecurrent);
}
void BM_RetentionPrefill_Auto(benchmark::State& s) {
  retention(s, 2048, std::nullopt);
}
void BM_RetentionDecodeStep_Auto(benchmark::State& s) {
  retention(s, 1, std::nullopt);
}
void BM_LinearAttentionGatedPrefill_Chunkwise(benchmark::State& s) {
  linear_attention(s, "gated", 2048, ScanForm::kChunkwise);
}
void BM_LinearAttentionGatedPrefill_Recurrent(benchmark::State& s) {
  linear_attention(s, "gated", 2048, ScanForm::kRecurrent);
}
void BM_LinearAttentionGatedDeltaPrefill_Chunkwise(benchmark::State& s) {
  linear_attention(s, "gated_delta", 2048, ScanForm::kChunkwise);
}
void BM_LinearAttentionGatedDeltaPrefill_Recurrent(benchmark::State& s) {
  linear_attention(s, "gated_delta", 2048, ScanForm::kRecurrent);
}
void BM_LinearAttentionGatedDecodeStep_Auto(benchmark::State& s) {
  linear_attention(s, "gated", 1, std::nullopt);
}
void BM_LinearAttentionGatedDeltaDecodeStep_Auto(benchmark::State& s) {
  linear_attention(s, "gated_delta", 1, std::nullopt);
}

BENCHMARK(BM_RetentionPrefill_Chunkwise)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RetentionPrefill_Recurrent)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RetentionPrefill_Auto)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RetentionDecodeStep_Auto)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_LinearAttentionGatedPrefill_Chunkwise)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_LinearAttentionGatedPrefill_Recurrent)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_LinearAttentionGatedDeltaPrefill_Chunkwise)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_LinearAttentionGatedDeltaPrefill_Recurrent)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_LinearAttentionGatedDecodeStep_Auto)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_LinearAttentionGatedDeltaDecodeStep_Auto)
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace seqrt::cpu

