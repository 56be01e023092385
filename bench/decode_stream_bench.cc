// One decode step of an attention layer through a Stream on the CPU
// backend, over a KV cache of fixed capacity (DESIGN.md §4): TensorScatter
// writes the new key and value at the last position, Attention reads the
// valid keys (nonpad_kv_seqlen). B=1, H=12, d=64.
//
// The Stream hands its cache to the run, so TensorScatter writes one row in
// place and the step reads each cached byte once (GB/s against the triad).
// With `copied` = 1 a snapshot is held, which forces the copy a runtime
// without in-place state would make every step: the difference is the cost
// of concatenation/copy per step.
#include <benchmark/benchmark.h>

#include "bench/roofline.h"
#include "graph/builder.h"
#include "runtime/stream.h"
#include "testing/random_tensor.h"

namespace seqrt {
namespace {

constexpr int64_t kHeads = 12, kHeadDim = 64;

Result<Graph> decode_layer(int64_t capacity) {
  GraphBuilder b("decode_layer");
  Shape token{1, kHeads, 1, kHeadDim};
  Shape cache{1, kHeads, capacity, kHeadDim};
  ValueId q = b.input("q", DType::kF32, token);
  ValueId k = b.input("k", DType::kF32, token);
  ValueId v = b.input("v", DType::kF32, token);
  ValueId past_key = b.input("past_key", DType::kF32, cache);
  ValueId past_value = b.input("past_value", DType::kF32, cache);
  ValueId write_index = b.input("write_index", DType::kI64, Shape{1});
  ValueId valid_len = b.input("valid_len", DType::kI64, Shape{1});
  NodeOptions scatter;
  scatter.output_names = {"present_key"};
  ValueId key = b.add_node("TensorScatter", {past_key, k, write_index}, {}, 1,
                           scatter)[0];
  scatter.output_names = {"present_value"};
  ValueId value = b.add_node("TensorScatter", {past_value, v, write_index}, {},
                             1, scatter)[0];
  NodeOptions attention;
  attention.domain = kSeqrtDomain;
  attention.output_names = {"y"};
  b.output(b.add_node("Attention",
                      {q, key, value, kNoValue, kNoValue, kNoValue, valid_len},
                      {{"is_causal", int64_t{1}}}, 1, attention)[0]);
  b.output(key);
  b.output(value);
  b.state_pair(past_key, key);
  b.state_pair(past_value, value);
  return std::move(b).build();
}

// Arguments: cache capacity (every position valid), copied (1: a snapshot
// is held, so each step copies the cache).
void BM_DecodeStep_Stream(benchmark::State& state) {
  const int64_t capacity = state.range(0);
  const bool copied = state.range(1) != 0;
  Result<Graph> graph = decode_layer(capacity);
  if (!graph.is_ok())
    return state.SkipWithError(graph.status().message().c_str());
  SessionOptions options;
  options.backend = "cpu";
  auto session = Session::create(std::move(graph).value(), options);
  if (!session.is_ok())
    return state.SkipWithError(session.status().message().c_str());
  Stream stream(**session);
  stream.set_update_state_in_place(true);
  const std::map<std::string, Tensor> feeds = {
      {"q", random_uniform_f32({1, kHeads, 1, kHeadDim}, 1)},
      {"k", random_uniform_f32({1, kHeads, 1, kHeadDim}, 2)},
      {"v", random_uniform_f32({1, kHeads, 1, kHeadDim}, 3)},
      {"write_index", Tensor::from_vector<int64_t>({1}, {capacity - 1})},
      {"valid_len", Tensor::from_vector<int64_t>({1}, {capacity})}};
  // Fill the cache with values that are not all zero.
  Status filled = stream.restore(
      {{"past_key", random_uniform_f32({1, kHeads, capacity, kHeadDim}, 4)},
       {"past_value", random_uniform_f32({1, kHeads, capacity, kHeadDim}, 5)}});
  if (!filled.is_ok()) return state.SkipWithError(filled.message().c_str());
  for (auto _ : state) {
    std::map<std::string, Tensor> held;
    if (copied) held = stream.snapshot();
    auto out = stream.run(feeds);
    if (!out.is_ok())
      return state.SkipWithError(out.status().message().c_str());
    benchmark::DoNotOptimize(out->at("y").data());
  }
  const double cache_bytes = 2.0 * kHeads * capacity * kHeadDim * 4.0;
  bench::report_bytes(state, cache_bytes);
  state.counters["ns_per_key"] =
      benchmark::Counter(static_cast<double>(capacity) / 1e9,
                         benchmark::Counter::kIsIterationInvariantRate |
                             benchmark::Counter::kInvert);
}
BENCHMARK(BM_DecodeStep_Stream)
    ->ArgsProduct({{1024, 4096, 16384, 32768}, {0, 1}})
    ->ArgNames({"cache", "copied"})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

}  // namespace
}  // namespace seqrt
