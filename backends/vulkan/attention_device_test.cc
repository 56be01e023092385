// Attention (seqrt::Attention and ONNX Attention) on a Vulkan device
// (lavapipe in CI) against the reference kernels with the shared-memory
// limit forced to 16/32/48 KiB and subgroups on and off: softmax and sigmoid
// scores, GQA, causal and sliding windows, bool and float masks, a KV cache
// and its split-K decode; a prefill then single-token steps through the
// cache equal the whole sequence.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "backends/vulkan/kernels/sequence_device_testing.h"

namespace seqrt::vulkan {
namespace {

using scan_testing::slice_axis;
using scan_testing::uniform;
using sequence_testing::expect_matches_reference;
using sequence_testing::open_device;
using sequence_testing::run_on_device;
using sequence_testing::RunOptions;

using VulkanAttention = sequence_testing::DeviceTest;

// Q (B,Hq,Tq,d), K (B,Hkv,Tk,d), V (B,Hkv,Tk,dv).
std::vector<Tensor> qkv(int64_t b, int64_t hq, int64_t hkv, int64_t tq,
                        int64_t tk, int64_t d, int64_t dv, uint64_t seed) {
  return {uniform({b, hq, tq, d}, seed, -1, 1),
          uniform({b, hkv, tk, d}, seed + 1, -1, 1),
          uniform({b, hkv, tk, dv}, seed + 2, -1, 1)};
}

AttrMap causal() { return {{"is_causal", int64_t{1}}}; }

TEST_F(VulkanAttention, CausalGqaMatchesReferenceAtEveryLimit) {
  // d = 40 splits each row over invocations; dv != d; Hq = 4 Hkv.
  auto tilings =
      expect_matches_reference(kSeqrtDomain, "Attention",
                               qkv(2, 4, 1, 37, 37, 40, 24, 1), causal(), 1e-4,
                               /*num_outputs=*/1);
  ASSERT_EQ(tilings.size(), 6u);
  // The limit changes the tile: 16 KiB gets a shorter one than 48 KiB.
  EXPECT_NE(tilings[0].constants, tilings[2].constants);
}

TEST_F(VulkanAttention, WindowsSoftcapAndScale) {
  expect_matches_reference(kSeqrtDomain, "Attention",
                           qkv(1, 2, 2, 45, 45, 16, 16, 2),
                           {{"window_left", int64_t{5}},
                            {"window_right", int64_t{7}},
                            {"softcap", 2.0f},
                            {"scale", 1.5f}},
                           1e-4, 1);
  expect_matches_reference(
      kSeqrtDomain, "Attention", qkv(1, 2, 1, 33, 33, 8, 8, 3),
      {{"is_causal", int64_t{1}}, {"window_left", int64_t{0}}}, 1e-4, 1);
}

TEST_F(VulkanAttention, SigmoidScoresWithBias) {
  AttrMap attrs = causal();
  attrs["score"] = std::string("sigmoid");
  attrs["sigmoid_bias"] = static_cast<float>(-std::log(30.0));
  expect_matches_reference(kSeqrtDomain, "Attention",
                           qkv(1, 4, 2, 30, 30, 32, 32, 4), attrs, 1e-4, 1);
}

TEST_F(VulkanAttention, BoolAndFloatMasksWithFullyMaskedRows) {
  std::vector<Tensor> in = qkv(2, 2, 2, 9, 21, 16, 16, 5);
  Tensor mask = uniform({2, 1, 9, 21}, 6, 0, 1);
  Tensor bits = Tensor::allocate(DType::kBool, {2, 1, 9, 21}).value();
  for (int64_t e = 0; e < mask.num_elements(); ++e) {
    const int64_t row = (e / 21) % 9;
    bits.set_element_i64(e, row != 3 && mask.element_f64(e) > 0.3 ? 1 : 0);
  }
  in.push_back(bits);
  expect_matches_reference(kSeqrtDomain, "Attention", in, {}, 1e-4, 1);
  Tensor added = uniform({9, 21}, 7, -4, 2);
  for (int64_t j = 0; j < 21; ++j) {
    added.set_element_f64(2 * 21 + j, -std::numeric_limits<double>::infinity());
  }
  in.back() = added;
  expect_matches_reference(kSeqrtDomain, "Attention", in, causal(), 1e-4, 1);
}

// Decode over a long cache: split-K with the reduce pass, and the present
// caches as outputs.
TEST_F(VulkanAttention, DecodeOverLongCacheSplitsTheKeys) {
  std::vector<Tensor> in = qkv(1, 8, 2, 1, 1, 32, 32, 8);
  in.push_back(Tensor());
  in.push_back(uniform({1, 2, 700, 32}, 9, -1, 1));
  in.push_back(uniform({1, 2, 700, 32}, 10, -1, 1));
  auto tilings = expect_matches_reference(kSeqrtDomain, "Attention", in,
                                          causal(), 1e-4, 3);
  ASSERT_EQ(tilings.size(), 6u);
  for (const KernelTiling& t : tilings) {
    EXPECT_GT(t.constants[7], 1u) << t.summary;  // key splits
  }
  AttrMap sigmoid = {{"score", std::string("sigmoid")},
                     {"sigmoid_bias", -6.5f}};
  expect_matches_reference(kSeqrtDomain, "Attention", in, sigmoid, 1e-4, 3);
}

// Two queries over a cache of 8000 keys with two invocations per
// workgroup: more loop iterations than one invocation may run on llvmpipe,
// so the planner splits the keys (tiling.h, kMaxLoopIterations).
TEST_F(VulkanAttention, LongCacheWithFewQueriesStaysWithinTheLoopBudget) {
  auto device = open_device({48, true});
  ASSERT_TRUE(device.is_ok());
  std::vector<Tensor> in = qkv(1, 1, 1, 2, 2, 16, 16, 12);
  in.push_back(Tensor());
  in.push_back(uniform({1, 1, 7998, 16}, 13, -1, 1));
  in.push_back(uniform({1, 1, 7998, 16}, 14, -1, 1));
  auto want = scan_testing::run_op(kSeqrtDomain, "Attention", in, causal(), 1);
  ASSERT_TRUE(want.is_ok());
  auto got =
      run_on_device(*device, kSeqrtDomain, "Attention", in, causal(), *want);
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  EXPECT_GT(got->tiling.constants[7], 1u) << got->tiling.summary;
  scan_testing::expect_close(got->outputs[0], (*want)[0], 1e-4, "y");
  EXPECT_EQ((*device)->validation_messages(), 0);
}

// Prefill of 8 tokens, then 4 single-token steps through the KV cache
// (present -> past), equal the whole causal sequence of 12.
TEST_F(VulkanAttention, PrefillThenStepsEqualsWhole) {
  auto device = open_device({16, true});
  ASSERT_TRUE(device.is_ok());
  const std::vector<Tensor> whole = qkv(1, 4, 2, 12, 12, 16, 8, 11);
  auto want =
      scan_testing::run_op(kSeqrtDomain, "Attention", whole, causal(), 1);
  ASSERT_TRUE(want.is_ok()) << want.status().to_string();
  Tensor past_k, past_v;
  for (auto [begin, end] : {std::pair<int64_t, int64_t>{0, 8},
                            {8, 9},
                            {9, 10},
                            {10, 11},
                            {11, 12}}) {
    std::vector<Tensor> part;
    for (size_t i : {0, 1, 2})
      part.push_back(slice_axis(whole[i], 2, begin, end));
    part.push_back(Tensor());
    part.push_back(past_k);
    part.push_back(past_v);
    if (begin == 0) part.resize(3);
    auto want_part =
        scan_testing::run_op(kSeqrtDomain, "Attention", part, causal(), 3);
    ASSERT_TRUE(want_part.is_ok()) << want_part.status().to_string();
    auto got = run_on_device(*device, kSeqrtDomain, "Attention", part, causal(),
                             *want_part);
    ASSERT_TRUE(got.is_ok()) << got.status().to_string();
    scan_testing::expect_close(got->outputs[0],
                               slice_axis((*want)[0], 2, begin, end), 1e-4,
                               "tokens from " + std::to_string(begin));
    past_k = got->outputs[1];
    past_v = got->outputs[2];
  }
  EXPECT_EQ(past_k.dims(), (std::vector<int64_t>{1, 2, 12, 16}));
  scan_testing::expect_close(past_v, whole[2], 0, "cached values");
  EXPECT_EQ((*device)->validation_messages(), 0);
}

TEST_F(VulkanAttention, OnnxPackedTopLeftCausalAndPast) {
  // 3D inputs, Tq = 5 < Tk = 11: ONNX's causal mask is top-left.
  std::vector<Tensor> packed = {uniform({2, 5, 3 * 8}, 21, -1, 1),
                                uniform({2, 11, 1 * 8}, 22, -1, 1),
                                uniform({2, 11, 1 * 12}, 23, -1, 1)};
  AttrMap attrs = {{"is_causal", int64_t{1}},
                   {"q_num_heads", int64_t{3}},
                   {"kv_num_heads", int64_t{1}}};
  expect_matches_reference(kOnnxDomain, "Attention", packed, attrs, 1e-4, 1);
  // 4D with a past: query i sees keys j <= i + Tp; a float mask over the
  // first 30 of Ttot = 33 keys hides the rest.
  std::vector<Tensor> in = qkv(1, 2, 2, 3, 3, 16, 16, 24);
  in.push_back(uniform({1, 1, 3, 30}, 25, -2, 1));
  in.push_back(uniform({1, 2, 30, 16}, 26, -1, 1));
  in.push_back(uniform({1, 2, 30, 16}, 27, -1, 1));
  expect_matches_reference(kOnnxDomain, "Attention", in, causal(), 1e-4, 3);
}

TEST_F(VulkanAttention, ConstantNonpadKvSeqlen) {
  std::vector<Tensor> in = qkv(2, 4, 2, 1, 40, 16, 16, 31);
  in.resize(6);
  in.push_back(Tensor::from_vector<int64_t>({2}, {23, 5}));
  RunOptions options;
  options.constant_inputs = {6};
  expect_matches_reference(kSeqrtDomain, "Attention", in, causal(), 1e-4, 1,
                           options);
  // Given as a run-time input its values could not be checked.
  auto device = open_device({32, true});
  ASSERT_TRUE(device.is_ok());
  auto want = scan_testing::run_op(kSeqrtDomain, "Attention", in, causal(), 1);
  ASSERT_TRUE(want.is_ok());
  auto got =
      run_on_device(*device, kSeqrtDomain, "Attention", in, causal(), *want);
  ASSERT_FALSE(got.is_ok());
  EXPECT_EQ(got.status().code(), StatusCode::kUnsupported);
}

}  // namespace
}  // namespace seqrt::vulkan
