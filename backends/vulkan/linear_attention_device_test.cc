// ONNX LinearAttention on a Vulkan device (lavapipe in CI) against the
// reference kernel, every update rule, with the shared-memory limit forced
// to 16/32/48 KiB and subgroups on and off; a prefill then single-token
// steps with the state carried equal the whole sequence.
#include <gtest/gtest.h>

#include "backends/vulkan/kernels/sequence_device_testing.h"
#include "backends/vulkan/linear_attention_testing.h"
#include "backends/vulkan/tiling.h"

namespace seqrt::vulkan {
namespace {

using scan_testing::uniform;
using sequence_testing::expect_matches_reference;
using sequence_testing::expect_parts_equal_whole;
using sequence_testing::open_device;
using sequence_testing::run_on_device;

using linear_attention_testing::attrs_for;
using linear_attention_testing::inputs;
using linear_attention_testing::Sizes;
using VulkanLinearAttention = sequence_testing::DeviceTest;

TEST_F(VulkanLinearAttention, EveryRuleMatchesReferenceAtEveryLimit) {
  // d_k = 40 splits each column's rows over invocations; GQA 2.
  const Sizes s{2, 19, 4, 2, 40, 12};
  for (const char* rule : {"linear", "gated", "delta", "gated_delta"}) {
    SCOPED_TRACE(rule);
    auto tilings = expect_matches_reference(kOnnxDomain, "LinearAttention",
                                            inputs(s, true, true, 1),
                                            attrs_for(rule, s), 1e-4);
    ASSERT_EQ(tilings.size(), 6u);
    EXPECT_EQ(tilings[0].state_place, "registers");
  }
}

TEST_F(VulkanLinearAttention, PerHeadDecaySharedBetaNoPastSmallHeads) {
  const Sizes s{1, 23, 3, 1, 8, 8};
  std::vector<Tensor> in = inputs(s, false, false, 11);
  in[3] = Tensor();
  AttrMap attrs = attrs_for("gated_delta", s);
  attrs["scale"] = 0.5f;
  expect_matches_reference(kOnnxDomain, "LinearAttention", in, attrs, 1e-4);
}

TEST_F(VulkanLinearAttention, PrefillThenStepsEqualsWhole) {
  auto device = open_device({16, false});
  ASSERT_TRUE(device.is_ok());
  const Sizes s{1, 10, 2, 2, 24, 8};
  expect_parts_equal_whole(*device,
                           {kOnnxDomain,
                            "LinearAttention",
                            attrs_for("gated_delta", s),
                            {0, 1, 2, 4, 5},
                            3,
                            1e-4},
                           inputs(s, true, true, 21),
                           {{0, 7}, {7, 8}, {8, 9}, {9, 10}});
}

TEST_F(VulkanLinearAttention, StateInSharedMemoryWhenInvocationsAreFew) {
  // Planned for 4 invocations per workgroup: d_k = 96 needs 24 rows per
  // invocation, over the register budget.
  auto device = open_device({32, false});
  ASSERT_TRUE(device.is_ok());
  DeviceLimits few = (*device)->limits();
  few.max_invocations = 4;
  const Sizes s{1, 9, 1, 1, 96, 4};
  std::vector<Tensor> in = inputs(s, true, true, 31);
  const AttrMap attrs = attrs_for("delta", s);
  auto want = scan_testing::run_op(kOnnxDomain, "LinearAttention", in, attrs);
  ASSERT_TRUE(want.is_ok());
  sequence_testing::RunOptions options;
  options.plan_limits = &few;
  auto got = run_on_device(*device, kOnnxDomain, "LinearAttention", in, attrs,
                           *want, options);
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  EXPECT_EQ(got->tiling.state_place, "shared memory");
  for (size_t i = 0; i < want->size(); ++i) {
    scan_testing::expect_close(got->outputs[i], (*want)[i], 1e-4,
                               "output " + std::to_string(i));
  }
  EXPECT_EQ((*device)->validation_messages(), 0);
}

TEST_F(VulkanLinearAttention, LongSequenceRunsInSegmentsCarryingTheState) {
  // 20000 tokens with 2 invocations per workgroup: more loop iterations
  // than one dispatch may run on llvmpipe, so several segments (tiling.h).
  auto device = open_device({32, true});
  ASSERT_TRUE(device.is_ok());
  const Sizes s{1, 20000, 1, 1, 8, 2};
  const std::vector<Tensor> in = inputs(s, false, true, 51);
  const AttrMap attrs = attrs_for("gated_delta", s);
  auto want = scan_testing::run_op(kOnnxDomain, "LinearAttention", in, attrs);
  ASSERT_TRUE(want.is_ok());
  auto got =
      run_on_device(*device, kOnnxDomain, "LinearAttention", in, attrs, *want);
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  EXPECT_GT(got->dispatches, 1) << got->tiling.summary;
  for (size_t i = 0; i < want->size(); ++i) {
    scan_testing::expect_close(got->outputs[i], (*want)[i], 1e-4,
                               "output " + std::to_string(i));
  }
  EXPECT_EQ((*device)->validation_messages(), 0);
}

TEST_F(VulkanLinearAttention, ChunkedFormMatchesReferenceAtEveryLimit) {
  // 300 tokens: chunks and a shorter last one; GQA 2, a past state.
  const Sizes s{1, 300, 4, 2, 16, 8};
  for (const char* rule : {"linear", "gated"}) {
    SCOPED_TRACE(rule);
    auto tilings = expect_matches_reference(kOnnxDomain, "LinearAttention",
                                            inputs(s, true, true, 61),
                                            attrs_for(rule, s), 1e-4);
    ASSERT_EQ(tilings.size(), 6u);
    for (const KernelTiling& t : tilings) {
      EXPECT_TRUE(is_chunked_linear_attention(t)) << t.summary;
    }
  }
  // A decay per head, chunk hint 16.
  AttrMap attrs = attrs_for("gated", s);
  attrs["chunk_size"] = int64_t{16};
  expect_matches_reference(kOnnxDomain, "LinearAttention",
                           inputs(s, false, true, 62), attrs, 1e-4);
}

TEST_F(VulkanLinearAttention, ChunkedEqualsRecurrent) {
  const Sizes s{2, 270, 2, 1, 8, 8};
  sequence_testing::expect_chunked_equals_recurrent(
      kOnnxDomain, "LinearAttention", inputs(s, true, true, 63),
      attrs_for("gated", s), is_chunked_linear_attention, 3, 1e-4);
}

TEST_F(VulkanLinearAttention, MissingGateIsAnError) {
  const Sizes s{1, 4, 2, 2, 8, 8};
  std::vector<Tensor> in = inputs(s, true, true, 41);
  in[5] = Tensor();
  auto device = open_device({32, true});
  ASSERT_TRUE(device.is_ok());
  auto got =
      run_on_device(*device, kOnnxDomain, "LinearAttention", in,
                    attrs_for("delta", s), {uniform({1, 4, 16}, 1, 0, 1)});
  ASSERT_FALSE(got.is_ok());
  EXPECT_NE(got.status().message().find("beta"), std::string::npos);
}

}  // namespace
}  // namespace seqrt::vulkan
