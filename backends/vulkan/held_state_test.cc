// A Stream on a backend list ("vulkan,cpu") keeps a state on the device of
// the segment that alone reads and writes it, and carries the others as
// host tensors: each step equals the CPU backend's Stream, across
// snapshot/restore, and moves only what crosses between segments.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backends/vulkan/executable.h"
#include "backends/vulkan/test_util.h"
#include "graph/builder.h"
#include "runtime/stream.h"

namespace seqrt {
namespace {

constexpr uint64_t kRowBytes = 2 * 8 * 4;  // a (2, 8) f32 tensor

Graph build(GraphBuilder& b) {
  Result<Graph> graph = std::move(b).build();
  EXPECT_TRUE(graph.is_ok()) << graph.status().to_string();
  return std::move(graph).value();
}

ValueId mixer(GraphBuilder& b) {
  std::vector<float> m(64);
  for (size_t i = 0; i < m.size(); ++i) m[i] = 0.05f * float(i % 7) - 0.1f;
  return b.constant("m", Tensor::from_vector<float>({8, 8}, m));
}

// CumSum of `x` along `axis` computed in f64, which the Vulkan kernels do
// not take: a CPU island.
ValueId cumsum_in_f64(GraphBuilder& b, ValueId x, ValueId axis) {
  ValueId wide = b.add("Cast", {x}, {{"to", static_cast<int64_t>(11)}});
  ValueId summed = b.add("CumSum", {wide, axis});
  return b.add("Cast", {summed}, {{"to", static_cast<int64_t>(1)}});
}

// x -> MatMul -> CumSum (in f64, so on the CPU) -> MatMul -> + past ->
// present, y = Neg(present): the state is read and written only by the
// last Vulkan segment.
Graph island_state_graph() {
  GraphBuilder b("island_state");
  ValueId x = b.input("x", DType::kF32, Shape{2, 8});
  ValueId axis = b.input("axis", DType::kI64, Shape{});
  ValueId past = b.input("past", DType::kF32, Shape{2, 8});
  ValueId m = mixer(b);
  ValueId summed = cumsum_in_f64(b, b.add("MatMul", {x, m}), axis);
  ValueId present = b.add("Add", {b.add("MatMul", {summed, m}), past});
  b.output(b.add("Neg", {present}), "y");
  b.output(present, "present");
  b.state_pair(past, present);
  return build(b);
}

// As island_state_graph, but the CPU's CumSum reads the state itself, so
// it must cross each step.
Graph state_read_on_cpu_graph() {
  GraphBuilder b("state_read_on_cpu");
  ValueId x = b.input("x", DType::kF32, Shape{2, 8});
  ValueId axis = b.input("axis", DType::kI64, Shape{});
  ValueId past = b.input("past", DType::kF32, Shape{2, 8});
  ValueId summed = cumsum_in_f64(b, past, axis);
  ValueId present = b.add("Add", {b.add("MatMul", {x, mixer(b)}), summed});
  b.output(b.add("Neg", {present}), "y");
  b.output(present, "present");
  b.state_pair(past, present);
  return build(b);
}

// A decode step's shape: the cache (1, past, 4) grows by the new rows x
// (1, seq, 4) plus their positions Range(past, past + seq), which the
// plan computes from the cache's length; y sums the whole cache.
Graph growing_cache_graph() {
  GraphBuilder b("growing_cache");
  ValueId x = b.input("x", DType::kF32, Shape{1, Dim::symbol("seq"), 4});
  ValueId past = b.input("past", DType::kF32, Shape{1, Dim::symbol("past"), 4});
  auto ints = [&](const std::string& name, std::vector<int64_t> v) {
    const int64_t n = static_cast<int64_t>(v.size());
    return b.constant(name, Tensor::from_vector<int64_t>({n}, v));
  };
  auto length_of = [&](ValueId v, const std::string& name) {
    ValueId dims = b.add("Shape", {v});
    ValueId one = b.add(
        "Slice", {dims, ints(name + "_from", {1}), ints(name + "_to", {2})});
    return b.add("Squeeze", {one, ints(name + "_axes", {0})});
  };
  ValueId start = length_of(past, "past");
  ValueId limit = b.add("Add", {start, length_of(x, "seq")});
  ValueId delta = b.constant("delta", Tensor::scalar<int64_t>(1));
  ValueId positions = b.add("Cast", {b.add("Range", {start, limit, delta})},
                            {{"to", static_cast<int64_t>(1)}});
  ValueId column = b.add("Unsqueeze", {positions, ints("column", {0, 2})});
  ValueId rows = b.add("Add", {x, column});
  ValueId present = b.add("Concat", {past, rows}, {{"axis", int64_t{1}}});
  b.output(b.add("ReduceSum", {present, ints("over", {1})}), "y");
  b.output(present, "present");
  b.state_pair(past, present);
  return build(b);
}

std::map<std::string, Tensor> island_feeds(float scale) {
  std::vector<float> x(16);
  for (size_t i = 0; i < x.size(); ++i) x[i] = scale * (float(i) - 7.5f);
  return {{"x", Tensor::from_vector<float>({2, 8}, x)},
          {"axis", Tensor::scalar<int64_t>(1)}};
}

std::map<std::string, Tensor> cache_feeds(int64_t rows, float scale) {
  std::vector<float> x(rows * 4);
  for (size_t i = 0; i < x.size(); ++i) x[i] = scale * (float(i % 5) - 2.0f);
  return {{"x", Tensor::from_vector<float>({1, rows, 4}, x)}};
}

using vulkan::testing::expect_close_outputs;

class HeldStateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    vulkan::testing::use_lavapipe_with_validation();
    SEQRT_OPEN_VULKAN_OR_SKIP(probe);
  }

  void open(Graph (*make)()) {
    SessionOptions options;
    options.backend = "cpu";
    auto cpu = Session::create(make(), options);
    ASSERT_TRUE(cpu.is_ok()) << cpu.status().to_string();
    cpu_ = std::move(cpu).value();
    options.backend = "vulkan,cpu";
    auto mixed = Session::create(make(), options);
    ASSERT_TRUE(mixed.is_ok()) << mixed.status().to_string();
    mixed_ = std::move(mixed).value();
  }

  // One step on both Streams; the Vulkan bytes it moved.
  vulkan::TransferCounts step_both(Stream& mixed, Stream& cpu,
                                   const std::map<std::string, Tensor>& feeds,
                                   const std::string& where) {
    const vulkan::TransferCounts before = vulkan::process_transfers();
    auto got = mixed.run(feeds);
    const vulkan::TransferCounts after = vulkan::process_transfers();
    EXPECT_TRUE(got.is_ok()) << where << ": " << got.status().to_string();
    auto want = cpu.run(feeds);
    EXPECT_TRUE(want.is_ok()) << where << ": " << want.status().to_string();
    if (got.is_ok() && want.is_ok()) expect_close_outputs(*got, *want, where);
    return {after.to_device - before.to_device, after.to_host - before.to_host};
  }

  std::unique_ptr<Session> cpu_, mixed_;
};

TEST_F(HeldStateTest, AStateTheLastSegmentOwnsStaysOnTheDevice) {
  ASSERT_NO_FATAL_FAILURE(open(island_state_graph));
  const std::string report = mixed_->placement_report({});
  EXPECT_NE(report.find("3 segment(s)"), std::string::npos) << report;
  EXPECT_NE(report.find("1 state pair(s) kept on the device"),
            std::string::npos)
      << report;
  Stream mixed(*mixed_), cpu(*cpu_);
  int step = 0;
  for (float scale : {1.0f, -0.5f, 2.0f, 0.25f}) {
    const std::string where = "step " + std::to_string(step);
    vulkan::TransferCounts moved =
        step_both(mixed, cpu, island_feeds(scale), where);
    // x into the first segment, the CumSum into the last; a product out of
    // the first, y out of the last. The state is written once, at the start.
    EXPECT_EQ(moved.to_device, 2 * kRowBytes + (step == 0 ? kRowBytes : 0))
        << where;
    EXPECT_EQ(moved.to_host, 2 * kRowBytes) << where;
    ++step;
  }
  // A snapshot reads the held state back; restoring it continues both.
  std::map<std::string, Tensor> saved = mixed.snapshot();
  ASSERT_EQ(saved.size(), 1u);
  expect_close_outputs(saved, cpu.snapshot(), "snapshot");
  ASSERT_TRUE(mixed.restore(saved).is_ok());
  step_both(mixed, cpu, island_feeds(3.0f), "after restore");
}

TEST_F(HeldStateTest, AStateTheCpuReadsCrossesAsATensor) {
  ASSERT_NO_FATAL_FAILURE(open(state_read_on_cpu_graph));
  const std::string report = mixed_->placement_report({});
  EXPECT_EQ(report.find("kept on the device"), std::string::npos) << report;
  Stream mixed(*mixed_), cpu(*cpu_);
  for (float scale : {1.0f, -2.0f, 0.5f}) {
    step_both(mixed, cpu, island_feeds(scale),
              "scale " + std::to_string(scale));
  }
  expect_close_outputs(mixed.snapshot(), cpu.snapshot(), "snapshot");
}

TEST_F(HeldStateTest, AGrowingCacheWithPositionsFromItsLengthStaysOnTheDevice) {
  ASSERT_NO_FATAL_FAILURE(open(growing_cache_graph));
  // Range reads the cache's length, which the plan knows: one segment.
  const std::string report = mixed_->placement_report({});
  EXPECT_NE(report.find("1 segment(s)"), std::string::npos) << report;
  Stream mixed(*mixed_), cpu(*cpu_);
  // A prompt of 3 rows, then steps of one: only x and y cross.
  vulkan::TransferCounts moved =
      step_both(mixed, cpu, cache_feeds(3, 1.0f), "prompt");
  EXPECT_EQ(moved.to_host, 4u * 4) << "prompt";
  for (int step = 0; step < 4; ++step) {
    const std::string where = "step " + std::to_string(step);
    moved = step_both(mixed, cpu, cache_feeds(1, 0.5f + step), where);
    EXPECT_EQ(moved.to_device, 4u * 4) << where;
    EXPECT_EQ(moved.to_host, 4u * 4) << where;
  }
  expect_close_outputs(mixed.snapshot(), cpu.snapshot(), "snapshot");
}

}  // namespace
}  // namespace seqrt
