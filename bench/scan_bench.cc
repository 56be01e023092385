// The state-space kernels of the CPU backend at Mamba-sized shapes, called
// directly on a hand-built node (no graph):
// - SelectiveScan (Mamba-1), B=1, D=1536, N=16: prefill at L = 2048 and
//   8192 (the cost must be linear in L) and one decode step;
// - SSD (Mamba-2), H=24, P=64, N=128, one group: prefill at L = 4096 with
//   chunk hints 32/64/256 (the op's default hint is 256; the kernel caps it
//   by shape, at 64 here) and the recurrent form, and one decode step;
// - the same SSD problem given to SelectiveScan (D = H·P = 1536 channels,
//   N = 128, A[d,n] = A_h, Δ per head broadcast to its P channels, B and C
//   shared), so the two kernels are compared in one run on equal inputs.
//
// Gupdates/s: state updates per second, one update = one (t, channel, n)
// step, L·D·N per call for both ops (D = H·P for SSD), so SSD and
// SelectiveScan rates compare directly. SSD's chunked form also reports
// the GFLOP/s (and peak_frac) of the products it executes; `chunk` is the
// chunk length the kernel chose for the hint. Decode steps report the
// bytes of state read and written (triad_frac).
#include <benchmark/benchmark.h>

#include <random>
#include <string>
#include <vector>

#include "backends/cpu/kernel_table.h"
#include "backends/cpu/kernels/ssd_kernel.h"
#include "bench/roofline.h"
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
  for (size_t i = 0; i < inputs.size(); ++i) {
    node.inputs.push_back(inputs[i].empty() ? kNoValue
                                            : static_cast<ValueId>(i));
    args.push_back(inputs[i].empty() ? nullptr : &inputs[i]);
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
  }
  state.counters["tokens/s"] =
      benchmark::Counter(static_cast<double>(state.iterations() * tokens),
                         benchmark::Counter::kIsRate);
}

// A decode step reads and writes the whole state once.
void report_state_bytes(benchmark::State& state, double state_elements) {
  bench::report_bytes(state, 2.0 * state_elements * sizeof(float));
}

constexpr int64_t kChannels = 1536, kScanN = 16;

// Mamba-1: u, delta, A, Bm, Cm, Dskip, z, delta_bias, past_state.
std::vector<Tensor> selective_scan_inputs(int64_t length) {
  return {random({1, kChannels, length}, 1, -1, 1),
          random({1, kChannels, length}, 2, -4, 0),
          random({kChannels, kScanN}, 3, -8, -1),
          random({1, 1, kScanN, length}, 4, -1, 1),
          random({1, 1, kScanN, length}, 5, -1, 1),
          random({kChannels}, 6, -1, 1),
          random({1, kChannels, length}, 7, -2, 2),
          random({kChannels}, 8, -0.5, 0.5),
          random({1, kChannels, kScanN}, 9, -1, 1)};
}

void BM_SelectiveScanPrefill_Fused(benchmark::State& state) {
  const int64_t length = state.range(0);
  run_kernel(state, "SelectiveScan", selective_scan_inputs(length), {}, length);
  bench::report_rate(state, "Gupdates/s",
                     static_cast<double>(length * kChannels * kScanN));
}
BENCHMARK(BM_SelectiveScanPrefill_Fused)
    ->ArgNames({"L"})
    ->Arg(2048)
    ->Arg(8192)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_SelectiveScanDecode_Fused(benchmark::State& state) {
  run_kernel(state, "SelectiveScan", selective_scan_inputs(1), {}, 1);
  report_state_bytes(state, kChannels * kScanN);
  bench::report_rate(state, "Gupdates/s",
                     static_cast<double>(kChannels * kScanN));
}
BENCHMARK(BM_SelectiveScanDecode_Fused)
    ->ArgNames({"L"})
    ->Arg(1)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

constexpr int64_t kHeads = 24, kHeadDim = 64, kSsdN = 128;
constexpr int64_t kSsdLength = 4096;

// Mamba-2: x, dt, A, Bm, Cm, D, z, dt_bias, past_state.
std::vector<Tensor> ssd_inputs(int64_t length) {
  return {random({1, length, kHeads, kHeadDim}, 11, -1, 1),
          random({1, length, kHeads}, 12, -4, 0),
          random({kHeads}, 13, -8, -1),
          random({1, length, 1, kSsdN}, 14, -1, 1),
          random({1, length, 1, kSsdN}, 15, -1, 1),
          random({kHeads}, 16, -1, 1),
          random({1, length, kHeads, kHeadDim}, 17, -2, 2),
          random({kHeads}, 18, -0.5, 0.5),
          random({1, kHeads, kHeadDim, kSsdN}, 19, -1, 1)};
}

double ssd_updates(int64_t length) {
  return static_cast<double>(length * kHeads * kHeadDim * kSsdN);
}

// Flops the chunked form executes per token and head with chunks of q:
// the intra-chunk (C·Bᵀ∘L)·X over full q×q blocks (2qP), C·Sᵀ and the
// state update (2NP each), and C·Bᵀ (2qN) counted once per token for all
// heads of the (single) group (the kernel computes it once per part of the
// group it runs together, up to 4 times: at most 5 % more than counted).
double ssd_chunk_flops(int64_t q) {
  return 2.0 * q * kHeadDim + 4.0 * kSsdN * kHeadDim + 2.0 * q * kSsdN / kHeads;
}

void BM_SSDPrefill_Chunked(benchmark::State& state) {
  const int64_t hint = state.range(1);
  const int64_t length = state.range(0);
  run_kernel(state, "SSD", ssd_inputs(length), {{"chunk_size", hint}}, length);
  const SsdDims dims{1, length, kHeads, kHeadDim, 1, kSsdN};
  const int64_t chunk = cpu::ssd_chunk_length(dims, hint);
  state.counters["chunk"] = static_cast<double>(chunk);
  bench::report_rate(state, "Gupdates/s", ssd_updates(length));
  bench::report_flops(state, ssd_chunk_flops(chunk) * length * kHeads);
}
BENCHMARK(BM_SSDPrefill_Chunked)
    ->ArgNames({"L", "chunk"})
    ->Args({kSsdLength, 32})
    ->Args({kSsdLength, 64})
    ->Args({kSsdLength, 256})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// The kernel takes the recurrent form for any head with a decay exponent
// Δ·A > 0, which a tiny negative Δ (no softplus, dt_min < 0) gives without
// changing the work done.
void BM_SSDPrefill_Recurrent(benchmark::State& state) {
  const int64_t length = state.range(0);
  std::vector<Tensor> inputs = ssd_inputs(length);
  inputs[1] = random({1, length, kHeads}, 12, -0.5, 0.5);
  AttrMap attrs{{"dt_softplus", int64_t{0}}, {"dt_min", -1e-6f}};
  run_kernel(state, "SSD", inputs, attrs, length);
  bench::report_rate(state, "Gupdates/s", ssd_updates(length));
}
BENCHMARK(BM_SSDPrefill_Recurrent)
    ->ArgNames({"L"})
    ->Arg(kSsdLength)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_SSDDecode_Step(benchmark::State& state) {
  run_kernel(state, "SSD", ssd_inputs(1), {}, 1);
  report_state_bytes(state, kHeads * kHeadDim * kSsdN);
  bench::report_rate(state, "Gupdates/s", ssd_updates(1));
}
BENCHMARK(BM_SSDDecode_Step)
    ->ArgNames({"L"})
    ->Arg(1)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

// (1, L, H, P) -> (1, H·P, L).
Tensor heads_to_channels(const Tensor& x, int64_t length) {
  Tensor out = Tensor::allocate(DType::kF32, {1, kChannels, length}).value();
  const float* from = x.data_as<float>();
  float* to = out.mutable_data_as<float>();
  for (int64_t t = 0; t < length; ++t) {
    for (int64_t c = 0; c < kChannels; ++c) {
      to[c * length + t] = from[t * kChannels + c];
    }
  }
  return out;
}

// Per-head values (H) or (1, L, H) repeated for the P channels of each head:
// (D) or (1, D, L).
Tensor per_channel(const Tensor& v, int64_t length, bool per_token) {
  std::vector<int64_t> dims = per_token
                                  ? std::vector<int64_t>{1, kChannels, length}
                                  : std::vector<int64_t>{kChannels};
  Tensor out = Tensor::allocate(DType::kF32, dims).value();
  const float* from = v.data_as<float>();
  float* to = out.mutable_data_as<float>();
  for (int64_t c = 0; c < kChannels; ++c) {
    const int64_t h = c / kHeadDim;
    if (!per_token) {
      to[c] = from[h];
      continue;
    }
    for (int64_t t = 0; t < length; ++t) {
      to[c * length + t] = from[t * kHeads + h];
    }
  }
  return out;
}

// (1, L, 1, N) -> (1, 1, N, L).
Tensor transpose_bc(const Tensor& m, int64_t length) {
  Tensor out = Tensor::allocate(DType::kF32, {1, 1, kSsdN, length}).value();
  const float* from = m.data_as<float>();
  float* to = out.mutable_data_as<float>();
  for (int64_t t = 0; t < length; ++t) {
    for (int64_t n = 0; n < kSsdN; ++n)
      to[n * length + t] = from[t * kSsdN + n];
  }
  return out;
}

// SelectiveScan on exactly the SSD prefill problem above (same numbers,
// rearranged): the generic kernel, with A[d,n] = A_h for every n.
void BM_SelectiveScanPrefillScalarA_Fused(benchmark::State& state) {
  const int64_t length = state.range(0);
  const std::vector<Tensor> ssd = ssd_inputs(length);
  Tensor a = Tensor::allocate(DType::kF32, {kChannels, kSsdN}).value();
  for (int64_t c = 0; c < kChannels; ++c) {
    for (int64_t n = 0; n < kSsdN; ++n) {
      a.mutable_data_as<float>()[c * kSsdN + n] =
          ssd[2].data_as<float>()[c / kHeadDim];
    }
  }
  Tensor past = ssd[8].reshaped({1, kChannels, kSsdN}).value();
  std::vector<Tensor> inputs = {heads_to_channels(ssd[0], length),
                                per_channel(ssd[1], length, true),
                                a,
                                transpose_bc(ssd[3], length),
                                transpose_bc(ssd[4], length),
                                per_channel(ssd[5], length, false),
                                heads_to_channels(ssd[6], length),
                                per_channel(ssd[7], length, false),
                                past};
  run_kernel(state, "SelectiveScan", inputs, {}, length);
  bench::report_rate(state, "Gupdates/s", ssd_updates(length));
}
BENCHMARK(BM_SelectiveScanPrefillScalarA_Fused)
    ->ArgNames({"L"})
    ->Arg(kSsdLength)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace seqrt
