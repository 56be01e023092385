// CPU Retention and LinearAttention at the goal's shape: B = 1, H = 8,
// d_k = d_v = 128, prefill of T ∈ {1024, 4096} tokens in each form
// (chunkwise, recurrent, and the automatic choice), and one decode step
// from a carried state.
//
// Flops. GFLOP/s and peak_frac count the same useful work for every form:
// the recurrent form's two products per token and head (the rank-1 update
// k_tᵀ v_t and the read q_t S_t), 4·d_k·d_v flops, so the forms compare like
// for like. The chunkwise form really does more (the intra-chunk products
// over full C×C blocks, 2·C·(d_k + d_v) per token, plus the delta rules'
// K Kᵀ, K S and substitution); `chunk_flops` states that count per token and
// head for the chunk length used, and `work_GFLOP/s` the rate over it.
// The decode step reports GB/s over the state it reads and writes.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "backends/cpu/kernels/linear_attention.h"
#include "backends/cpu/kernels/retention.h"
#include "bench/roofline.h"
#include "ops/registry.h"

namespace seqrt::cpu {
namespace {

constexpr int64_t kHeads = 8, kDk = 128, kDv = 128;
// The default chunk_size of both ops.
constexpr int64_t kChunk = 64;

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

// Useful flops per token and head, the same for every form.
double useful_flops() { return 4.0 * kDk * kDv; }

// Flops per token and head of the chunkwise algorithm with chunks of
// `length` tokens: Q S and Kᵀ V (4·d_k·d_v) and the causal halves of Q Kᵀ
// and P V ((C + 1)·(d_k + d_v)); the delta rules add K S (2·d_k·d_v), the
// strictly lower K Kᵀ and the substitution ((C − 1)·(d_k + d_v)). The
// kernel's tiles (6 rows × 16 columns on AVX2) run a little more than the
// causal half; this counts the algorithm's work, not the tiles'.
double chunk_flops(int64_t length, bool delta) {
  double l = static_cast<double>(length);
  double f = 4.0 * kDk * kDv + (l + 1.0) * (kDk + kDv);
  if (delta) f += 2.0 * kDk * kDv + (l - 1.0) * (kDk + kDv);
  return f;
}

void report(benchmark::State& state, int64_t tokens,
            std::optional<ScanForm> form, bool delta) {
  const double token_heads = static_cast<double>(tokens * kHeads);
  if (tokens == 1) {
    // A decode step reads and writes every head's state once.
    bench::report_bytes(state, 2.0 * kHeads * kDk * kDv * sizeof(float));
    return;
  }
  bench::report_flops(state, useful_flops() * token_heads);
  ScanForm used = form ? *form : choose_scan_form(tokens, kChunk);
  if (used == ScanForm::kRecurrent) return;
  int64_t length = chunk_length_for(used, tokens, kChunk, kDk, kDv);
  double work = chunk_flops(length, delta);
  state.counters["chunk"] = static_cast<double>(length);
  state.counters["chunk_flops"] = work;
  state.counters["work_GFLOP/s"] = benchmark::Counter(
      work * token_heads * static_cast<double>(state.iterations()) / 1e9,
      benchmark::Counter::kIsRate);
}

// One node of `op` over `inputs`, run by `kernel` once per iteration.
template <typename Kernel>
void run_node(benchmark::State& state, const std::string& domain,
              const std::string& op, const std::vector<Tensor>& inputs,
              const AttrMap& attrs, Kernel kernel) {
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
}

void retention(benchmark::State& state, std::optional<ScanForm> form) {
  const int64_t t = state.range(0);
  std::vector<Tensor> inputs = {
      random_f32({1, kHeads, t, kDk}, 1), random_f32({1, kHeads, t, kDk}, 2),
      random_f32({1, kHeads, t, kDv}, 3), random_f32({1, kHeads, kDk, kDv}, 4)};
  run_node(state, kSeqrtDomain, "Retention", inputs, {},
           [form](KernelContext& ctx) { return run_retention_cpu(ctx, form); });
  report(state, t, form, false);
}

void linear_attention(benchmark::State& state, const std::string& rule,
                      std::optional<ScanForm> form) {
  const int64_t t = state.range(0);
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
  run_node(state, kOnnxDomain, "LinearAttention", inputs, attrs,
           [form](KernelContext& ctx) {
             return run_linear_attention_cpu(ctx, form);
           });
  report(state, t, form, rule == "delta" || rule == "gated_delta");
}

// Prefill at the goal's lengths; T = 1 is the decode step.
void prefill(benchmark::internal::Benchmark* b) {
  b->Arg(1024)->Arg(4096)->Unit(benchmark::kMillisecond)->UseRealTime();
}
void decode(benchmark::internal::Benchmark* b) {
  b->Arg(1)->Unit(benchmark::kMicrosecond)->UseRealTime();
}

constexpr std::optional<ScanForm> kChunkwise = ScanForm::kChunkwise;
constexpr std::optional<ScanForm> kRecurrent = ScanForm::kRecurrent;
constexpr std::optional<ScanForm> kAuto = std::nullopt;

BENCHMARK_CAPTURE(retention, chunkwise, kChunkwise)->Apply(prefill);
BENCHMARK_CAPTURE(retention, recurrent, kRecurrent)->Apply(prefill);
BENCHMARK_CAPTURE(retention, step, kAuto)->Apply(decode);

BENCHMARK_CAPTURE(linear_attention, gated_chunkwise, "gated", kChunkwise)
    ->Apply(prefill);
BENCHMARK_CAPTURE(linear_attention, gated_recurrent, "gated", kRecurrent)
    ->Apply(prefill);
BENCHMARK_CAPTURE(linear_attention, gated_step, "gated", kAuto)->Apply(decode);
BENCHMARK_CAPTURE(linear_attention, gated_delta_chunkwise, "gated_delta",
                  kChunkwise)
    ->Apply(prefill);
BENCHMARK_CAPTURE(linear_attention, gated_delta_recurrent, "gated_delta",
                  kRecurrent)
    ->Apply(prefill);
BENCHMARK_CAPTURE(linear_attention, gated_delta_step, "gated_delta", kAuto)
    ->Apply(decode);
BENCHMARK_CAPTURE(linear_attention, linear_chunkwise, "linear", kChunkwise)
    ->Apply(prefill);
BENCHMARK_CAPTURE(linear_attention, linear_recurrent, "linear", kRecurrent)
    ->Apply(prefill);
BENCHMARK_CAPTURE(linear_attention, delta_chunkwise, "delta", kChunkwise)
    ->Apply(prefill);
BENCHMARK_CAPTURE(linear_attention, delta_recurrent, "delta", kRecurrent)
    ->Apply(prefill);

}  // namespace
}  // namespace seqrt::cpu
