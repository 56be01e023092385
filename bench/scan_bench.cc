// The state-space kernels of the CPU backend, called directly (no graph):
// SelectiveScan (Mamba-1, B=1, D=1536, N=16) and SSD (Mamba-2, H=24, P=64,
// N=128), a 2048-token prefill and a single decode step each. Reports
// tokens/s and the bytes of inputs and outputs moved per second.
#include <benchmark/benchmark.h>

#include <random>
#include <string>
#include <vector>

#include "backends/cpu/kernel_table.h"
#include "ops/registry.h"

namespace seqrt {
namespace {

Tensor random(std::vector<int64_t> dims, uint64_t seed, float lo, float hi) {
  Tensor tensor = Tensor::allocate(DType::kF32, std::move(dims)).value();
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  float* data = tensor.mutable_data_as<float>();
  for (int64_t i = 0; i < tensor.num_elements(); ++i) data[i] = dist(rng);
  return tensor;
}

// Runs the op's CPU kernel on `inputs` once per iteration.
void run_kernel(benchmark::State& state, const std::string& op,
                const std::vector<Tensor>& inputs, const AttrMap& attrs,
                int64_t tokens) {
  const OpSchema* schema = OpRegistry::global().find(kSeqrtDomain, op);
  const cpu::CpuKernel* kernel = cpu::kernel_table().find(kSeqrtDomain, op);
  if (schema == nullptr || kernel == nullptr) {
    state.SkipWithError("no CPU kernel");
    return;
  }
  Node node;
  node.op = op;
  node.domain = kSeqrtDomain;
  node.attrs = attrs;
  std::vector<const Tensor*> args;
  int64_t bytes = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    node.inputs.push_back(inputs[i].empty() ? kNoValue
                                            : static_cast<ValueId>(i));
    args.push_back(inputs[i].empty() ? nullptr : &inputs[i]);
    bytes += static_cast<int64_t>(inputs[i].byte_size());
  }
  node.outputs = {100, 101};
  for (auto _ : state) {
    KernelContext ctx(node, *schema, args);
    Status status = kernel->run(ctx);
    if (!status.is_ok()) {
      state.SkipWithError(status.message().c_str());
      return;
    }
    benchmark::DoNotOptimize(ctx.outputs()[0].data());
    if (state.iterations() == 1) {
      for (const Tensor& out : ctx.outputs()) {
        bytes += static_cast<int64_t>(out.byte_size());
      }
    }
  }
  state.SetItemsProcessed(state.iterations() * tokens);
  state.SetBytesProcessed(state.iterations() * bytes);
  state.counters["tokens/s"] =
      benchmark::Counter(static_cast<double>(state.iterations() * tokens),
                         benchmark::Counter::kIsRate);
}

constexpr int64_t kChannels = 1536, kScanN = 16;

// Mamba-1: u, delta, A, Bm, Cm, Dskip, z, delta_bias, past_state.
void BM_SelectiveScan(benchmark::State& state) {
  const int64_t length = state.range(0);
  std::vector<Tensor> inputs = {random({1, kChannels, length}, 1, -1, 1),
                                random({1, kChannels, length}, 2, -4, 0),
                                random({kChannels, kScanN}, 3, -8, -1),
                                random({1, 1, kScanN, length}, 4, -1, 1),
                                random({1, 1, kScanN, length}, 5, -1, 1),
                                random({kChannels}, 6, -1, 1),
                                random({1, kChannels, length}, 7, -2, 2),
                                random({kChannels}, 8, -0.5, 0.5),
                                random({1, kChannels, kScanN}, 9, -1, 1)};
  run_kernel(state, "SelectiveScan", inputs, {}, length);
}
BENCHMARK(BM_SelectiveScan)
    ->ArgName("L")
    ->Arg(2048)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

constexpr int64_t kHeads = 24, kHeadDim = 64, kSsdN = 128;

// Mamba-2: x, dt, A, Bm, Cm, D, z, dt_bias, past_state; the chunk_size
// hint, or 0 for the recurrent form.
void BM_SSD(benchmark::State& state) {
  const int64_t length = state.range(0);
  std::vector<Tensor> inputs = {random({1, length, kHeads, kHeadDim}, 1, -1, 1),
                                random({1, length, kHeads}, 2, -4, 0),
                                random({kHeads}, 3, -8, -1),
                                random({1, length, 1, kSsdN}, 4, -1, 1),
                                random({1, length, 1, kSsdN}, 5, -1, 1),
                                random({kHeads}, 6, -1, 1),
                                random({1, length, kHeads, kHeadDim}, 7, -2, 2),
                                random({kHeads}, 8, -0.5, 0.5),
                                random({1, kHeads, kHeadDim, kSsdN}, 9, -1, 1)};
  AttrMap attrs{{"chunk_size", state.range(1) > 0 ? state.range(1) : 256}};
  if (state.range(1) == 0) {
    // chunk 0 times the recurrent form for comparison: the kernel takes it
    // for any head with a decay exponent Δ·A > 0, which a tiny negative Δ
    // (no softplus, dt_min < 0) gives without changing the work done.
    attrs["dt_softplus"] = Attribute(int64_t{0});
    attrs["dt_min"] = Attribute(-1e-6f);
    inputs[1] = random({1, length, kHeads}, 2, -0.5, 0.5);
  }
  run_kernel(state, "SSD", inputs, attrs, length);
}
BENCHMARK(BM_SSD)
    ->ArgNames({"L", "chunk"})
    ->Args({2048, 0})
    ->Args({2048, 64})
    ->Args({2048, 128})
    ->Args({2048, 256})
    ->Args({1, 256})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace seqrt

