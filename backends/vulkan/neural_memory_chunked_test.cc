// The chunk-parallel form of seqrt::NeuralMemory on a Vulkan device
// (lavapipe in CI): against the reference kernel for the sizes OPS.md names
// (d 16 and 64, m = d and 4d, chunk 16 and 64, depth 1 and 2, GELU and
// SiLU, retrieval before and after the update), against the token loop on
// the same device, from positions off the chunk grid, and prompts and
// decode steps (the token loop) continuing each other's state.
#include <gtest/gtest.h>

#include "backends/vulkan/kernels/sequence_device_testing.h"
#include "backends/vulkan/kernels/sequence_neural_memory.h"
#include "backends/vulkan/neural_memory_testing.h"

namespace seqrt::vulkan {
namespace {

using neural_memory_testing::memory_inputs;
using sequence_testing::open_device;
using sequence_testing::run_on_device;
using sequence_testing::RunOptions;

using VulkanNeuralMemoryChunked = sequence_testing::DeviceTest;

// memory_inputs with learning rates scaled to 1/d, so that wide memories
// stay stable over a hundred tokens.
std::vector<Tensor> stable_inputs(int64_t b, int64_t h, int64_t t, int64_t d,
                                  int64_t m, int depth, uint64_t seed) {
  std::vector<Tensor> in = memory_inputs(b, h, t, d, m, depth, seed);
  in[3] = scan_testing::uniform({b, h, t}, seed + 9, 0, 1.0 / d);
  return in;
}

AttrMap memory_attrs(int64_t depth, int64_t chunk, bool gelu, bool before) {
  return {{"depth", depth},
          {"chunk_size", chunk},
          {"activation", std::string(gelu ? "gelu" : "silu")},
          {"retrieve", std::string(before ? "before_update" : "after_update")}};
}

// Runs `in` on the device, expects the chunked form and the reference's
// outputs; returns the outputs.
std::vector<Tensor> expect_chunked_matches(
    const std::shared_ptr<Device>& device, const std::vector<Tensor>& in,
    const AttrMap& attrs, const RunOptions& options = {}) {
  auto want = scan_testing::run_op(kSeqrtDomain, "NeuralMemory", in, attrs);
  EXPECT_TRUE(want.is_ok()) << want.status().to_string();
  if (!want.is_ok()) return {};
  auto got = run_on_device(device, kSeqrtDomain, "NeuralMemory", in, attrs,
                           *want, options);
  EXPECT_TRUE(got.is_ok()) << got.status().to_string();
  if (!got.is_ok()) return {};
  EXPECT_TRUE(is_chunked_neural_memory(got->tiling)) << got->tiling.summary;
  for (size_t i = 0; i < want->size(); ++i) {
    scan_testing::expect_close(got->outputs[i], (*want)[i], 2e-4,
                               "output " + std::to_string(i));
  }
  EXPECT_EQ(device->validation_messages(), 0);
  return got->outputs;
}

TEST_F(VulkanNeuralMemoryChunked, MatchesReferenceForTheSizesOfOpsMd) {
  auto device = open_device({32, true});
  ASSERT_TRUE(device.is_ok());
  struct Case {
    int64_t d, m, chunk, t;
    int depth;
    bool gelu, before;
  };
  const Case cases[] = {
      {16, 16, 16, 40, 2, true, false},  {16, 64, 16, 40, 2, false, true},
      {16, 16, 64, 100, 1, true, false}, {16, 16, 16, 37, 1, true, true},
      {64, 64, 16, 33, 2, true, true},   {64, 256, 64, 70, 2, true, false},
      {64, 64, 64, 64, 1, false, false},
  };
  uint64_t seed = 10;
  for (const Case& c : cases) {
    SCOPED_TRACE(testing::Message()
                 << "d " << c.d << ", m " << c.m << ", chunk " << c.chunk
                 << ", depth " << c.depth << ", before " << c.before);
    expect_chunked_matches(
        *device, stable_inputs(2, 2, c.t, c.d, c.m, c.depth, seed += 10),
        memory_attrs(c.depth, c.chunk, c.gelu, c.before));
  }
}

TEST_F(VulkanNeuralMemoryChunked, EqualsTheTokenLoop) {
  // 3 rounds of 16 tokens, 9 phases each, and the initialisation.
  sequence_testing::expect_chunked_equals_recurrent(
      kSeqrtDomain, "NeuralMemory", stable_inputs(1, 2, 48, 16, 32, 2, 3),
      memory_attrs(2, 16, true, false), is_chunked_neural_memory, 28, 1e-4);
}

TEST_F(VulkanNeuralMemoryChunked, StartsOffTheChunkGridFromPastState) {
  auto device = open_device({32, true});
  ASSERT_TRUE(device.is_ok());
  const AttrMap attrs = memory_attrs(2, 16, false, false);
  // A state from 21 tokens, then 30 more from positions 21 and 5: the
  // rounds of each batch row follow its own chunk grid.
  std::vector<Tensor> first = stable_inputs(2, 2, 21, 16, 32, 2, 4);
  std::vector<Tensor> outputs = expect_chunked_matches(*device, first, attrs);
  ASSERT_EQ(outputs.size(), 2u);
  std::vector<Tensor> next = stable_inputs(2, 2, 30, 16, 32, 2, 5);
  next.push_back(outputs[1]);
  next.push_back(Tensor::from_vector<int64_t>({2}, {21, 5}));
  RunOptions options;
  options.constant_inputs = {9};
  expect_chunked_matches(*device, next, attrs, options);
}

TEST_F(VulkanNeuralMemoryChunked, PromptsAndStepsContinueEachOther) {
  auto device = open_device({16, true});
  ASSERT_TRUE(device.is_ok());
  // A prompt of 25 tokens (chunked, ends mid-chunk), 3 steps (token loop),
  // then 32 tokens from position 28 (chunked, starts mid-chunk).
  std::vector<KernelTiling> tilings =
      neural_memory_testing::expect_parts_equal_whole(
          *device, stable_inputs(1, 2, 60, 16, 32, 2, 6),
          memory_attrs(2, 16, true, true),
          {{0, 25}, {25, 26}, {26, 27}, {27, 28}, {28, 60}});
  ASSERT_EQ(tilings.size(), 5u);
  for (size_t i = 0; i < tilings.size(); ++i) {
    EXPECT_EQ(is_chunked_neural_memory(tilings[i]), i == 0 || i == 4)
        << tilings[i].summary;
  }
}

TEST(NeuralMemoryChunkedPlan, TakesPromptsWithLongEnoughRounds) {
  DeviceLimits limits;
  limits.max_invocations = 256;
  limits.shared_memory_bytes = 32 * 1024;
  limits.max_storage_buffer_range = uint64_t{1} << 27;
  MemoryCall call{1, 2, 64, 32, 64, 2, 16, true, false};
  auto chunked = plan_neural_memory_chunked(call, limits);
  ASSERT_TRUE(chunked.has_value());
  EXPECT_TRUE(is_chunked_neural_memory(*chunked));
  EXPECT_NE(chunked->summary.find("rounds of up to 16 tokens"),
            std::string::npos)
      << chunked->summary;
  // A decode step, chunks too short for matrix products, and scratch past
  // one binding's range run the token loop.
  MemoryCall step = call;
  step.seq = 1;
  EXPECT_FALSE(plan_neural_memory_chunked(step, limits).has_value());
  MemoryCall short_chunks = call;
  short_chunks.chunk = kNeuralMemoryChunkedMinRows - 1;
  EXPECT_FALSE(plan_neural_memory_chunked(short_chunks, limits).has_value());
  DeviceLimits narrow = limits;
  narrow.max_storage_buffer_range =
      4 * neural_memory_chunk_floats(call, 16) * 2 - 4;
  EXPECT_FALSE(plan_neural_memory_chunked(call, narrow).has_value());
}

}  // namespace
}  // namespace seqrt::vulkan
