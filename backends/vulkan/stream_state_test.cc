// A Stream on Vulkan keeps its state on the device (DESIGN.md §4): stepped
// through a model with three kinds of state (a Retention state updated by
// ping-pong, a KV cache that grows by concatenation, and a fixed-capacity
// KV cache written in place by a Where), it equals the CPU backend's
// Stream, across snapshot/restore, reset and interleaved Streams, while each
// step moves only its inputs and outputs between host and device; a
// NeuralMemory prompt (chunk-parallel) and its steps (token loop) continue
// each other's state on the device.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "backends/vulkan/executable.h"
#include "backends/vulkan/test_util.h"
#include "graph/builder.h"
#include "runtime/stream.h"
#include "testing/random_tensor.h"

namespace seqrt {
namespace {

constexpr int64_t kHeads = 2, kDim = 8, kCapacity = 8;
constexpr uint64_t kTokenBytes = kHeads * kDim * 4;  // one f32 token
// A step of three_state_graph: q, k, v and write_index in, three y out.
constexpr uint64_t kStepInputBytes = 3 * kTokenBytes + 8;
constexpr uint64_t kStepOutputBytes = 3 * kTokenBytes;

NodeOptions seqrt_node(std::vector<std::string> outputs) {
  NodeOptions options;
  options.domain = kSeqrtDomain;
  options.output_names = std::move(outputs);
  return options;
}

NodeOptions named(const std::string& output) {
  NodeOptions options;
  options.output_names = {output};
  return options;
}

Tensor positions(std::vector<int64_t> dims) {
  std::vector<int64_t> values(kCapacity);
  for (int64_t i = 0; i < kCapacity; ++i) values[i] = i;
  return Tensor::from_vector<int64_t>(std::move(dims), values);
}

// One token per step: y_ret from Retention (state past_state); y_grow from
// Attention over a concatenated cache (past_key/past_value, whose length
// is the symbol "past"); y_fixed from Attention over a fixed-capacity
// cache (cache_key/cache_value) whose row `write_index` a Where replaces,
// with the rows after it masked out.
Graph three_state_graph() {
  GraphBuilder b("three_states");
  Shape token{1, kHeads, 1, kDim};
  ValueId q = b.input("q", DType::kF32, token);
  ValueId k = b.input("k", DType::kF32, token);
  ValueId v = b.input("v", DType::kF32, token);
  ValueId write_index = b.input("write_index", DType::kI64, Shape{1});
  ValueId past_state =
      b.input("past_state", DType::kF32, Shape{1, kHeads, kDim, kDim});
  Shape grow{1, kHeads, Dim::symbol("past"), kDim};
  ValueId past_key = b.input("past_key", DType::kF32, grow);
  ValueId past_value = b.input("past_value", DType::kF32, grow);
  Shape fixed{1, kHeads, kCapacity, kDim};
  ValueId cache_key = b.input("cache_key", DType::kF32, fixed);
  ValueId cache_value = b.input("cache_value", DType::kF32, fixed);

  auto ret = b.add_node("Retention", {q, k, v, past_state}, {}, 2,
                        seqrt_node({"y_ret", "present_state"}));
  auto grown =
      b.add_node("Attention", {q, k, v, kNoValue, past_key, past_value},
                 {{"is_causal", int64_t{1}}}, 3,
                 seqrt_node({"y_grow", "present_key", "present_value"}));
  ValueId rows = b.constant("rows", positions({1, 1, kCapacity, 1}));
  ValueId cols = b.constant("cols", positions({1, 1, 1, kCapacity}));
  ValueId row = b.add("Equal", {rows, write_index}, {}, named("row"));
  ValueId new_key =
      b.add("Where", {row, k, cache_key}, {}, named("new_cache_key"));
  ValueId new_value =
      b.add("Where", {row, v, cache_value}, {}, named("new_cache_value"));
  ValueId visible =
      b.add("LessOrEqual", {cols, write_index}, {}, named("visible"));
  ValueId y_fixed = b.add_node("Attention", {q, new_key, new_value, visible},
                               {}, 1, seqrt_node({"y_fixed"}))[0];
  b.output(ret[0]);
  b.output(ret[1]);
  b.output(grown[0]);
  b.output(grown[1]);
  b.output(grown[2]);
  b.output(y_fixed);
  b.output(new_key);
  b.output(new_value);
  b.state_pair(past_state, ret[1]);
  Tensor empty = Tensor::allocate(DType::kF32, {1, kHeads, 0, kDim}).value();
  b.state_pair(past_key, grown[1], empty);
  b.state_pair(past_value, grown[2], empty);
  b.state_pair(cache_key, new_key);
  b.state_pair(cache_value, new_value);
  return std::move(b).build().value();
}

// y, present_state = Retention(q, k, v, past_state) over any number of
// tokens, so a prompt and the steps after it have different input dims.
Graph retention_graph() {
  GraphBuilder b("retention");
  Shape qkv{1, kHeads, Dim::symbol("seq"), kDim};
  ValueId q = b.input("q", DType::kF32, qkv);
  ValueId k = b.input("k", DType::kF32, qkv);
  ValueId v = b.input("v", DType::kF32, qkv);
  ValueId past =
      b.input("past_state", DType::kF32, Shape{1, kHeads, kDim, kDim});
  auto outs = b.add_node("Retention", {q, k, v, past}, {}, 2,
                         seqrt_node({"y", "present_state"}));
  b.output(outs[0]);
  b.output(outs[1]);
  b.state_pair(past, outs[1]);
  return std::move(b).build().value();
}

// y, present_state = NeuralMemory(q, k, v, θ, η, α, W1, W2, past_state),
// chunk_size 16, over any number of tokens: a prompt of 16 or more runs the
// chunk-parallel form on Vulkan, a step the token loop.
constexpr int64_t kMemoryParams = 2 * kDim * 2 * kDim;  // d·m + m·d, m = 2d
Graph neural_memory_graph() {
  GraphBuilder b("neural_memory");
  Shape qkv{1, kHeads, Dim::symbol("seq"), kDim};
  Shape gate{1, kHeads, Dim::symbol("seq")};
  std::vector<ValueId> in = {
      b.input("q", DType::kF32, qkv),    b.input("k", DType::kF32, qkv),
      b.input("v", DType::kF32, qkv),    b.input("theta", DType::kF32, gate),
      b.input("eta", DType::kF32, gate), b.input("alpha", DType::kF32, gate)};
  in.push_back(b.constant(
      "w1", random_uniform_f32({kHeads, kDim, 2 * kDim}, 5, -0.3f, 0.3f)));
  in.push_back(b.constant(
      "w2", random_uniform_f32({kHeads, 2 * kDim, kDim}, 6, -0.3f, 0.3f)));
  ValueId past =
      b.input("past_state", DType::kF32, Shape{1, kHeads, 3 * kMemoryParams});
  in.push_back(past);
  auto outs = b.add_node("NeuralMemory", in, {{"chunk_size", int64_t{16}}}, 2,
                         seqrt_node({"y", "present_state"}));
  b.output(outs[0]);
  b.output(outs[1]);
  Tensor initial =
      Tensor::allocate(DType::kF32, {1, kHeads, 3 * kMemoryParams}).value();
  b.state_pair(past, outs[1], initial);
  return std::move(b).build().value();
}

// NeuralMemory feeds of `t` tokens.
std::map<std::string, Tensor> memory_feeds(int64_t t, uint32_t seed) {
  std::vector<int64_t> tokens = {1, kHeads, t, kDim}, gates = {1, kHeads, t};
  return {{"q", random_uniform_f32(tokens, seed, -1, 1)},
          {"k", random_uniform_f32(tokens, seed + 1, -1, 1)},
          {"v", random_uniform_f32(tokens, seed + 2, -1, 1)},
          {"theta", random_uniform_f32(gates, seed + 3, 0, 0.05f)},
          {"eta", random_uniform_f32(gates, seed + 4, 0, 0.9f)},
          {"alpha", random_uniform_f32(gates, seed + 5, 0, 0.2f)}};
}

// The feeds of step `t` of sequence `seed`.
std::map<std::string, Tensor> step_feeds(int64_t t, uint32_t seed) {
  std::vector<int64_t> token = {1, kHeads, 1, kDim};
  const uint32_t base = seed * 1000 + 3 * static_cast<uint32_t>(t);
  return {{"q", random_uniform_f32(token, base)},
          {"k", random_uniform_f32(token, base + 1)},
          {"v", random_uniform_f32(token, base + 2)},
          {"write_index", Tensor::from_vector<int64_t>({1}, {t})}};
}

using vulkan::testing::expect_close_outputs;

class StreamStateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    vulkan::testing::use_lavapipe_with_validation();
    SEQRT_OPEN_VULKAN_OR_SKIP(probe);
  }

  // The graph's Session on each backend.
  void open(Graph (*make)()) {
    SessionOptions options;
    // The graph as built: no fusion pass turns its Where into a fused op.
    options.optimize = false;
    options.backend = "cpu";
    auto cpu = Session::create(make(), options);
    ASSERT_TRUE(cpu.is_ok()) << cpu.status().to_string();
    cpu_ = std::move(cpu).value();
    options.backend = "vulkan";
    auto gpu = Session::create(make(), options);
    ASSERT_TRUE(gpu.is_ok()) << gpu.status().to_string();
    gpu_ = std::move(gpu).value();
  }

  // One step on both Streams: same outputs.
  void step_both(Stream& gpu, Stream& cpu,
                 const std::map<std::string, Tensor>& feeds,
                 const std::string& where) {
    auto got = gpu.run(feeds);
    ASSERT_TRUE(got.is_ok()) << where << ": " << got.status().to_string();
    auto want = cpu.run(feeds);
    ASSERT_TRUE(want.is_ok()) << where << ": " << want.status().to_string();
    expect_close_outputs(*got, *want, where);
  }

  std::unique_ptr<Session> cpu_, gpu_;
};

TEST_F(StreamStateTest, StepsEqualTheCpuStreamAndMoveNoStateBytes) {
  ASSERT_NO_FATAL_FAILURE(open(three_state_graph));
  Stream gpu(*gpu_), cpu(*cpu_);
  // Read once, the state's bytes: Retention's, the empty growing cache and
  // the fixed one.
  const uint64_t state_bytes =
      (kHeads * kDim * kDim + 2 * kHeads * kCapacity * kDim) * 4;
  for (int64_t t = 0; t < kCapacity; ++t) {
    const vulkan::TransferCounts before = vulkan::process_transfers();
    const std::string where = "step " + std::to_string(t);
    ASSERT_NO_FATAL_FAILURE(step_both(gpu, cpu, step_feeds(t, 1), where));
    const vulkan::TransferCounts after = vulkan::process_transfers();
    // The first step loads the initial state; no step reads it back, and
    // none after the first writes it.
    EXPECT_EQ(after.to_device - before.to_device,
              kStepInputBytes + (t == 0 ? state_bytes : 0))
        << where;
    EXPECT_EQ(after.to_host - before.to_host, kStepOutputBytes) << where;
  }
  // The held state is the CPU's, read back on request.
  auto held = gpu.read_snapshot();
  ASSERT_TRUE(held.is_ok()) << held.status().to_string();
  expect_close_outputs(*held, cpu.snapshot(), "the state after the steps");
  EXPECT_EQ(held->at("past_key").dim(2), kCapacity);
}

TEST_F(StreamStateTest, SnapshotRestoreAndResetMatchTheCpuStream) {
  ASSERT_NO_FATAL_FAILURE(open(three_state_graph));
  Stream gpu(*gpu_), cpu(*cpu_);
  for (int64_t t = 0; t < 3; ++t) {
    ASSERT_NO_FATAL_FAILURE(
        step_both(gpu, cpu, step_feeds(t, 2), "prefix " + std::to_string(t)));
  }
  std::map<std::string, Tensor> saved = gpu.snapshot();
  ASSERT_EQ(saved.size(), 5u);
  std::map<std::string, Tensor> cpu_saved = cpu.snapshot();
  expect_close_outputs(saved, cpu_saved, "snapshot");
  for (int64_t t = 3; t < 6; ++t) {
    ASSERT_NO_FATAL_FAILURE(
        step_both(gpu, cpu, step_feeds(t, 2), "after " + std::to_string(t)));
  }
  // Back to step 3 on both; the snapshot is a copy the steps left alone.
  ASSERT_TRUE(gpu.restore(saved).is_ok());
  ASSERT_TRUE(cpu.restore(cpu_saved).is_ok());
  expect_close_outputs(gpu.snapshot(), cpu_saved, "restored, before a run");
  for (int64_t t = 3; t < 5; ++t) {
    ASSERT_NO_FATAL_FAILURE(
        step_both(gpu, cpu, step_feeds(t, 2), "again " + std::to_string(t)));
  }
  // A state restored from the CPU Stream runs on the device the same.
  ASSERT_TRUE(gpu.restore(cpu_saved).is_ok());
  ASSERT_TRUE(cpu.restore(cpu_saved).is_ok());
  ASSERT_NO_FATAL_FAILURE(step_both(gpu, cpu, step_feeds(3, 2), "from cpu"));

  gpu.reset();
  cpu.reset();
  EXPECT_TRUE(gpu.snapshot().empty());
  for (int64_t t = 0; t < 2; ++t) {
    ASSERT_NO_FATAL_FAILURE(
        step_both(gpu, cpu, step_feeds(t, 3), "reset " + std::to_string(t)));
  }
}

TEST_F(StreamStateTest, InterleavedStreamsKeepTheirOwnState) {
  ASSERT_NO_FATAL_FAILURE(open(three_state_graph));
  Stream gpu_a(*gpu_), gpu_b(*gpu_), cpu_a(*cpu_), cpu_b(*cpu_);
  for (int64_t t = 0; t < 5; ++t) {
    ASSERT_NO_FATAL_FAILURE(
        step_both(gpu_a, cpu_a, step_feeds(t, 4), "a " + std::to_string(t)));
    ASSERT_NO_FATAL_FAILURE(
        step_both(gpu_b, cpu_b, step_feeds(t, 5), "b " + std::to_string(t)));
  }
  // A state fed explicitly replaces the held one for that run.
  std::map<std::string, Tensor> feeds = step_feeds(5, 4);
  feeds["past_state"] = cpu_b.snapshot().at("past_state");
  ASSERT_NO_FATAL_FAILURE(step_both(gpu_a, cpu_a, feeds, "a fed b's state"));
}

TEST_F(StreamStateTest, StreamsOnTwoThreadsMatchTheCpuStreams) {
  ASSERT_NO_FATAL_FAILURE(open(three_state_graph));
  constexpr int kThreads = 2;
  constexpr int64_t kSteps = 5;
  using Outputs = std::vector<std::map<std::string, Tensor>>;
  std::vector<Outputs> want(kThreads), got(kThreads);
  for (int i = 0; i < kThreads; ++i) {
    Stream cpu(*cpu_);
    for (int64_t t = 0; t < kSteps; ++t) {
      auto out = cpu.run(step_feeds(t, 6 + i));
      ASSERT_TRUE(out.is_ok()) << out.status().to_string();
      want[i].push_back(std::move(out).value());
    }
  }
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      Stream gpu(*gpu_);
      for (int64_t t = 0; t < kSteps; ++t) {
        auto out = gpu.run(step_feeds(t, 6 + i));
        if (!out.is_ok()) {
          errors[i] = out.status().to_string();
          return;
        }
        got[i].push_back(std::move(out).value());
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int i = 0; i < kThreads; ++i) {
    ASSERT_EQ(errors[i], "") << "thread " << i;
    ASSERT_EQ(got[i].size(), want[i].size());
    for (size_t t = 0; t < want[i].size(); ++t) {
      expect_close_outputs(got[i][t], want[i][t],
                           fmt::format("thread {} step {}", i, t));
    }
  }
}

TEST_F(StreamStateTest, PrefillThenStepsChangeTheInputDims) {
  ASSERT_NO_FATAL_FAILURE(open(retention_graph));
  Stream gpu(*gpu_), cpu(*cpu_);
  const int64_t prompt = 5, total = 9;
  Tensor q = random_uniform_f32({1, kHeads, prompt, kDim}, 61);
  Tensor k = random_uniform_f32({1, kHeads, prompt, kDim}, 62);
  Tensor v = random_uniform_f32({1, kHeads, prompt, kDim}, 63);
  ASSERT_NO_FATAL_FAILURE(
      step_both(gpu, cpu, {{"q", q}, {"k", k}, {"v", v}}, "prompt"));
  for (int64_t t = prompt; t < total; ++t) {
    std::vector<int64_t> token = {1, kHeads, 1, kDim};
    const vulkan::TransferCounts before = vulkan::process_transfers();
    const uint32_t seed = static_cast<uint32_t>(t);
    ASSERT_NO_FATAL_FAILURE(
        step_both(gpu, cpu,
                  {{"q", random_uniform_f32(token, seed)},
                   {"k", random_uniform_f32(token, seed + 50)},
                   {"v", random_uniform_f32(token, seed + 90)}},
                  "step " + std::to_string(t)));
    const vulkan::TransferCounts after = vulkan::process_transfers();
    // q, k and v in, y out: Retention's state stays on the device.
    EXPECT_EQ(after.to_device - before.to_device, 3 * kTokenBytes);
    EXPECT_EQ(after.to_host - before.to_host, kTokenBytes);
  }
  // Bad feeds leave the state alone; the next good step goes on from it.
  auto bad = gpu.run({{"q", random_uniform_f32({1, kHeads, 1, kDim}, 1)},
                      {"k", random_uniform_f32({1, kHeads, 2, kDim}, 2)},
                      {"v", random_uniform_f32({1, kHeads, 1, kDim}, 3)}});
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("'k' has seq = 2"), std::string::npos)
      << bad.status().message();
  expect_close_outputs(gpu.snapshot(), cpu.snapshot(), "after a bad feed");
}

TEST_F(StreamStateTest, NeuralMemoryPromptThenStepsKeepTheStateOnTheDevice) {
  ASSERT_NO_FATAL_FAILURE(open(neural_memory_graph));
  Stream gpu(*gpu_), cpu(*cpu_);
  ASSERT_NO_FATAL_FAILURE(step_both(gpu, cpu, memory_feeds(40, 70), "prompt"));
  for (uint32_t t = 0; t < 3; ++t) {
    const vulkan::TransferCounts before = vulkan::process_transfers();
    ASSERT_NO_FATAL_FAILURE(step_both(gpu, cpu, memory_feeds(1, 80 + 10 * t),
                                      "step " + std::to_string(t)));
    const vulkan::TransferCounts after = vulkan::process_transfers();
    // q, k, v and the three gates in, y out: the memory stays put.
    EXPECT_EQ(after.to_device - before.to_device,
              3 * kTokenBytes + 3 * 4 * kHeads);
    EXPECT_EQ(after.to_host - before.to_host, kTokenBytes);
  }
  ASSERT_NO_FATAL_FAILURE(
      step_both(gpu, cpu, memory_feeds(20, 90), "a second prompt"));
  expect_close_outputs(gpu.snapshot(), cpu.snapshot(), "final state");
}

}  // namespace
}  // namespace seqrt
