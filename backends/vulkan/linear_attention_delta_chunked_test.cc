// The delta rules of ONNX LinearAttention in chunks on a Vulkan device
// (lavapipe in CI, where the planner takes them only when asked:
// SequenceForms::kChunked): against the reference kernel (delta and
// gated_delta, beta per head and shared, GQA, past state, a short last
// chunk), against the recurrent form on the same device, and a chunked
// prefill continued by recurrent steps; a decay per key, a CPU device under
// kAuto and kRecurrent keep the recurrent form.
#include <gtest/gtest.h>

#include "backends/vulkan/kernels/sequence_device_testing.h"
#include "backends/vulkan/kernels/sequence_linear_attention.h"
#include "backends/vulkan/linear_attention_testing.h"
#include "backends/vulkan/tiling.h"

namespace seqrt::vulkan {
namespace {

using linear_attention_testing::attrs_for;
using linear_attention_testing::inputs;
using linear_attention_testing::Sizes;
using sequence_testing::open_device;
using sequence_testing::run_on_device;

using sequence_testing::RunOptions;
using VulkanLinearAttentionDeltaChunked = sequence_testing::DeviceTest;

// Limits of a device opened for the tests, with the chunked forms asked for.
DeviceLimits chunked_limits() {
  auto device = open_device({32, true});
  DeviceLimits limits = device.is_ok() ? (*device)->limits() : DeviceLimits{};
  limits.forms = SequenceForms::kChunked;
  return limits;
}

TEST_F(VulkanLinearAttentionDeltaChunked, MatchesReference) {
  // 300 tokens: four chunks of 64 and one of 44; GQA 2.
  const Sizes s{2, 300, 4, 2, 16, 8};
  const DeviceLimits limits = chunked_limits();
  RunOptions options;
  options.plan_limits = &limits;
  for (const char* rule : {"delta", "gated_delta"}) {
    for (bool beta_per_head : {true, false}) {
      SCOPED_TRACE(testing::Message()
                   << rule << ", beta per head " << beta_per_head);
      auto tilings = sequence_testing::expect_matches_reference(
          kOnnxDomain, "LinearAttention", inputs(s, false, beta_per_head, 71),
          attrs_for(rule, s), 1e-4, 2, options);
      ASSERT_FALSE(tilings.empty());
      EXPECT_TRUE(is_delta_chunked_linear_attention(tilings[0]))
          << tilings[0].summary;
    }
  }
  // Chunks of 16 (the chunk_size hint), no past state, wider keys.
  const Sizes wide{1, 260, 2, 2, 64, 32};
  std::vector<Tensor> in = inputs(wide, false, true, 72);
  in[3] = Tensor();
  AttrMap attrs = attrs_for("gated_delta", wide);
  attrs["chunk_size"] = int64_t{16};
  sequence_testing::expect_matches_reference(kOnnxDomain, "LinearAttention", in,
                                             attrs, 1e-4);
}

TEST_F(VulkanLinearAttentionDeltaChunked, EqualsRecurrent) {
  // 270 tokens: 5 chunks, 4 phases each, and the state's initialisation.
  const Sizes s{2, 270, 2, 1, 8, 8};
  sequence_testing::expect_chunked_equals_recurrent(
      kOnnxDomain, "LinearAttention", inputs(s, false, true, 73),
      attrs_for("gated_delta", s), is_delta_chunked_linear_attention, 21, 1e-4,
      SequenceForms::kChunked);
}

TEST_F(VulkanLinearAttentionDeltaChunked, ChunkedPrefillThenRecurrentSteps) {
  auto device = open_device({32, true});
  ASSERT_TRUE(device.is_ok());
  const Sizes s{1, 262, 2, 2, 16, 8};
  const DeviceLimits limits = chunked_limits();
  RunOptions options;
  options.plan_limits = &limits;
  sequence_testing::expect_parts_equal_whole(
      *device,
      {kOnnxDomain,
       "LinearAttention",
       attrs_for("delta", s),
       {0, 1, 2, 4, 5},
       3,
       1e-4},
      inputs(s, false, true, 74), {{0, 260}, {260, 261}, {261, 262}}, options);
}

TEST_F(VulkanLinearAttentionDeltaChunked, DecayPerKeyStaysRecurrent) {
  auto device = open_device({32, true});
  ASSERT_TRUE(device.is_ok());
  const Sizes s{1, 270, 2, 2, 8, 8};
  const std::vector<Tensor> in = inputs(s, true, true, 75);
  const AttrMap attrs = attrs_for("gated_delta", s);
  auto want = scan_testing::run_op(kOnnxDomain, "LinearAttention", in, attrs);
  ASSERT_TRUE(want.is_ok());
  const DeviceLimits limits = chunked_limits();
  RunOptions options;
  options.plan_limits = &limits;
  auto got = run_on_device(*device, kOnnxDomain, "LinearAttention", in, attrs,
                           *want, options);
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  EXPECT_FALSE(is_delta_chunked_linear_attention(got->tiling));
  scan_testing::expect_close(got->outputs[0], (*want)[0], 1e-4, "output");
}

TEST(LinearAttentionDeltaChunkedPlan, ChunkedOnGpusOrWhenAskedFor) {
  DeviceLimits limits;
  limits.max_invocations = 256;
  limits.shared_memory_bytes = 32 * 1024;
  limits.max_storage_buffer_range = uint64_t{1} << 27;
  LinearDims d{1, 512, 4, 4, 32, 32, kLaUseDecay | kLaUseBeta, 0.1f};
  EXPECT_TRUE(plan_linear_attention_delta_chunked(d, 64, limits).has_value());
  limits.cpu_device = true;  // lavapipe: the recurrent form is faster
  EXPECT_FALSE(plan_linear_attention_delta_chunked(d, 64, limits).has_value());
  limits.forms = SequenceForms::kChunked;
  EXPECT_TRUE(plan_linear_attention_delta_chunked(d, 64, limits).has_value());
  limits.forms = SequenceForms::kRecurrent;
  limits.cpu_device = false;
  EXPECT_FALSE(plan_linear_attention_delta_chunked(d, 64, limits).has_value());
  // Rules without β and short sequences are not this form's.
  limits.forms = SequenceForms::kAuto;
  LinearDims gated = d;
  gated.gate_flags = kLaUseDecay;
  EXPECT_FALSE(
      plan_linear_attention_delta_chunked(gated, 64, limits).has_value());
  LinearDims short_one = d;
  short_one.seq = kChunkedMinLength - 1;
  EXPECT_FALSE(
      plan_linear_attention_delta_chunked(short_one, 64, limits).has_value());
}

}  // namespace
}  // namespace seqrt::vulkan
