#include <gtest/gtest.h>

#include <cmath>

#include "compiler/passes/pass_test_util.h"

namespace seqrt {
namespace {

using pass_testing::build_or_die;
using pass_testing::count_ops;
using pass_testing::expect_fused;
using pass_testing::expect_unchanged;
using pass_testing::random_tensor;

constexpr int64_t kHeads = 2;
constexpr int64_t kLen = 6;
constexpr int64_t kKeyDim = 4;
constexpr int64_t kValueDim = 3;

// Gated LinearAttention over packed (1,6,2·d) inputs with a past state.
// `per_head` expands log γ (2) to (1,6,2); otherwise the decay is a folded
// (1,6,2) constant whose last step differs.
Graph linear_attention_graph(bool per_head, float scale) {
  GraphBuilder b("la");
  ValueId q = b.input("q", DType::kF32, {1, kLen, kHeads * kKeyDim});
  ValueId k = b.input("k", DType::kF32, {1, kLen, kHeads * kKeyDim});
  ValueId v = b.input("v", DType::kF32, {1, kLen, kHeads * kValueDim});
  ValueId past =
      b.input("past_state", DType::kF32, {1, kHeads, kKeyDim, kValueDim});
  float g0 = std::log(0.9f);
  float g1 = std::log(0.5f);
  ValueId decay = kNoValue;
  if (per_head) {
    ValueId logs =
        b.constant("log_gamma", Tensor::from_vector<float>({kHeads}, {g0, g1}));
    ValueId shape = b.constant(
        "decay_shape", Tensor::from_vector<int64_t>({3}, {1, kLen, kHeads}));
    decay = b.add("Expand", {logs, shape});
  } else {
    std::vector<float> values;
    for (int64_t t = 0; t < kLen; ++t) {
      values.push_back(g0);
      values.push_back(t + 1 == kLen ? g0 : g1);
    }
    decay = b.constant("decay",
                       Tensor::from_vector<float>({1, kLen, kHeads}, values));
  }
  AttrMap attrs = {{"update_rule", Attribute("gated")},
                   {"q_num_heads", Attribute(kHeads)},
                   {"kv_num_heads", Attribute(kHeads)},
                   {"scale", Attribute(scale)}};
  std::vector<ValueId> outs =
      b.add_node("LinearAttention", {q, k, v, past, decay}, attrs, 2,
                 NodeOptions{"la", kOnnxDomain, {"y", "present_state"}});
  b.output(outs[0]);
  b.output(outs[1]);
  b.state_pair(past, outs[1]);
  return build_or_die(std::move(b));
}

std::map<std::string, Tensor> feeds() {
  return {{"q", random_tensor({1, kLen, kHeads * kKeyDim}, 71)},
          {"k", random_tensor({1, kLen, kHeads * kKeyDim}, 72)},
          {"v", random_tensor({1, kLen, kHeads * kValueDim}, 73)},
          {"past_state", random_tensor({1, kHeads, kKeyDim, kValueDim}, 74)}};
}

TEST(FuseRetention, FusesPerHeadConstantDecay) {
  for (float scale : {0.0f, 1.0f, 0.3f}) {
    SCOPED_TRACE(scale);
    Graph fused = expect_fused(linear_attention_graph(true, scale),
                               fuse_retention_pass(), "Retention", 1, feeds());
    EXPECT_EQ(count_ops(fused, "LinearAttention"), 0u);
    EXPECT_EQ(count_ops(fused, "Expand"), 0u);
    EXPECT_EQ(count_ops(fused, "Mul"), scale == 1.0f ? 0u : 1u);
    for (const Node& node : fused.nodes) {
      if (node.op != "Retention") continue;
      const std::vector<float>& gammas = node.attr("gammas")->as_floats();
      ASSERT_EQ(gammas.size(), 2u);
      EXPECT_NEAR(gammas[0], 0.9f, 1e-6);
      EXPECT_NEAR(gammas[1], 0.5f, 1e-6);
    }
    EXPECT_EQ(fused.value(fused.state_pairs[0].output).name, "present_state");
  }
}

TEST(FuseRetention, LeavesDecayThatChangesOverTime) {
  expect_unchanged(linear_attention_graph(false, 0.0f), fuse_retention_pass());
}

}  // namespace
}  // namespace seqrt
