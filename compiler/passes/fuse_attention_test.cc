#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "compiler/passes/pass_test_util.h"

namespace seqrt {
namespace {

using pass_testing::build_or_die;
using pass_testing::count_ops;
using pass_testing::expect_fused;
using pass_testing::expect_unchanged;
using pass_testing::random_tensor;

constexpr int64_t kHeads = 4;
constexpr int64_t kLen = 5;
constexpr int64_t kDim = 8;

ValueId ints(GraphBuilder& b, const std::string& name,
             std::vector<int64_t> values) {
  int64_t size = static_cast<int64_t>(values.size());
  return b.constant(name, Tensor::from_vector<int64_t>({size}, values));
}

ValueId transpose(GraphBuilder& b, ValueId x, std::vector<int64_t> perm) {
  return b.add("Transpose", {x}, {{"perm", Attribute(std::move(perm))}});
}

enum class Mask { kNone, kFloat, kBool };

struct AttentionOptions {
  Mask mask = Mask::kFloat;
  int64_t softmax_axis = -1;
  float fill = -3.4e38f;          // the Where branch for masked logits
  bool scale_q_and_k = false;     // Mul Q and K^T by d^-1/4 instead of Div
  bool vector_scale = false;      // the K^T scale is a (T) vector
  bool symbolic_len = false;      // T is the symbol "seq"
  bool mask_keys_symbol = false;  // the mask's key dim is its own symbol
  bool probs_output = false;      // the Softmax output is a graph output too
  bool blank_row = false;         // the bool mask hides every key of row 0
  // The dynamo exporter's K^T: Reshape(Transpose(Reshape(k, (H,T,d)),
  // 0,2,1), (1,H,d,T)); `flat_as` the inner Reshape's target.
  bool dynamo_key = false;
  std::vector<int64_t> flat_as = {kHeads, kLen, kDim};
  // Where(IsNaN(p), guard_value, p) after the Softmax.
  bool nan_guard = false;
  float guard_value = 0.0f;
};

// BERT/GPT style: Softmax(Q K^T / sqrt(d) + mask) V over (1,4,5,8).
Graph attention_graph(const AttentionOptions& options) {
  GraphBuilder b("attn");
  Dim len = options.symbolic_len ? Dim::symbol("seq") : Dim(kLen);
  std::vector<Dim> dims = {1, kHeads, len, kDim};
  ValueId q = b.input("q", DType::kF32, dims);
  ValueId k = b.input("k", DType::kF32, dims);
  ValueId v = b.input("v", DType::kF32, dims);
  ValueId kt = kNoValue;
  if (options.dynamo_key) {
    ValueId flat = b.add("Reshape", {k, ints(b, "flat", options.flat_as)});
    kt = b.add("Reshape", {transpose(b, flat, {0, 2, 1}),
                           ints(b, "kt_shape", {1, kHeads, kDim, kLen})});
  } else {
    kt = transpose(b, k, {0, 1, 3, 2});
  }
  ValueId s = kNoValue;
  if (options.scale_q_and_k) {
    float root = 1.0f / std::sqrt(std::sqrt(static_cast<float>(kDim)));
    Tensor k_scale =
        options.vector_scale
            ? Tensor::from_vector<float>({kLen}, std::vector<float>(kLen, root))
            : Tensor::scalar(root);
    ValueId qs = b.add("Mul", {q, b.constant("q_scale", Tensor::scalar(root))});
    ValueId ks = b.add("Mul", {kt, b.constant("k_scale", k_scale)});
    s = b.add("MatMul", {qs, ks});
  } else {
    ValueId root =
        b.constant("root", Tensor::scalar(std::sqrt(static_cast<float>(kDim))));
    s = b.add("Div", {b.add("MatMul", {q, kt}), root});
  }
  if (options.mask == Mask::kFloat) {
    s = b.add(
        "Add",
        {s, b.input("mask", DType::kF32,
                    {1, 1, len,
                     options.mask_keys_symbol ? Dim::symbol("keys") : len})});
  } else if (options.mask == Mask::kBool) {
    std::vector<bool> causal;
    for (int64_t i = 0; i < kLen; ++i) {
      for (int64_t j = 0; j < kLen; ++j) {
        causal.push_back(j <= i && !(options.blank_row && i == 0));
      }
    }
    ValueId mask =
        b.constant("causal", Tensor::from_vector<bool>({kLen, kLen}, causal));
    s = b.add("Where",
              {mask, s, b.constant("fill", Tensor::scalar(options.fill))});
  }
  ValueId p =
      b.add("Softmax", {s}, {{"axis", Attribute(options.softmax_axis)}});
  if (options.nan_guard) {
    p = b.add("Where",
              {b.add("IsNaN", {p}),
               b.constant("guard", Tensor::scalar(options.guard_value)), p});
  }
  b.output(b.add("MatMul", {p, v}), "y");
  if (options.probs_output) b.output(p, "probs");
  return build_or_die(std::move(b));
}

std::map<std::string, Tensor> attention_feeds(bool with_mask) {
  std::map<std::string, Tensor> feeds = {
      {"q", random_tensor({1, kHeads, kLen, kDim}, 11)},
      {"k", random_tensor({1, kHeads, kLen, kDim}, 12)},
      {"v", random_tensor({1, kHeads, kLen, kDim}, 13)}};
  if (with_mask) feeds["mask"] = random_tensor({1, 1, kLen, kLen}, 14);
  return feeds;
}

TEST(FuseAttention, FusesScaledMaskedSoftmax) {
  Graph fused = expect_fused(attention_graph({}), fuse_attention_pass(),
                             "Attention", 1, attention_feeds(true));
  ASSERT_EQ(fused.nodes.size(), 1u);
  const Node& node = fused.nodes[0];
  EXPECT_EQ(node.domain, kSeqrtDomain);
  EXPECT_EQ(node.inputs.size(), 4u);
  EXPECT_FLOAT_EQ(node.attr("scale")->as_float(), 1.0f / std::sqrt(8.0f));
}

TEST(FuseAttention, FusesSymbolicSequenceLength) {
  AttentionOptions options;
  options.symbolic_len = true;
  Graph fused = expect_fused(attention_graph(options), fuse_attention_pass(),
                             "Attention", 1, attention_feeds(true));
  EXPECT_EQ(fused.nodes.size(), 1u);
  EXPECT_EQ(*fused.value(fused.outputs[0]).shape,
            Shape({1, kHeads, Dim::symbol("seq"), kDim}));
}

// The mask's key dim is a symbol of its own, so the masked scores' last dim
// is unknown: the MatMul with V still proves it is the keys' count.
TEST(FuseAttention, FusesMaskWithItsOwnKeySymbol) {
  AttentionOptions options;
  options.symbolic_len = true;
  options.mask_keys_symbol = true;
  Graph fused = expect_fused(attention_graph(options), fuse_attention_pass(),
                             "Attention", 1, attention_feeds(true));
  EXPECT_EQ(fused.nodes.size(), 1u);
}

TEST(FuseAttention, FusesWithoutMaskAndWithBoolMask) {
  AttentionOptions none;
  none.mask = Mask::kNone;
  Graph fused = expect_fused(attention_graph(none), fuse_attention_pass(),
                             "Attention", 1, attention_feeds(false));
  EXPECT_EQ(fused.nodes[0].inputs.size(), 3u);
  AttentionOptions causal;
  causal.mask = Mask::kBool;
  fused = expect_fused(attention_graph(causal), fuse_attention_pass(),
                       "Attention", 1, attention_feeds(false));
  // The Where that makes the float mask; folding turns it into a constant.
  EXPECT_EQ(fused.nodes.size(), 2u);
  ASSERT_TRUE(fold_constants_pass().run(fused).is_ok());
  EXPECT_EQ(fused.nodes.size(), 1u);
}

// The decomposition averages V on a row whose keys are all masked; the
// fused node reads the Where as a float mask, so it does too.
TEST(FuseAttention, BoolMaskedRowWithNoVisibleKeyStaysTheSame) {
  AttentionOptions options;
  options.mask = Mask::kBool;
  options.blank_row = true;
  Graph fused = expect_fused(attention_graph(options), fuse_attention_pass(),
                             "Attention", 1, attention_feeds(false));
  ASSERT_EQ(count_ops(fused, "Where"), 1u);
  auto it = std::find_if(fused.nodes.begin(), fused.nodes.end(),
                         [](const Node& n) { return n.op == "Attention"; });
  ASSERT_NE(it, fused.nodes.end());
  const Node& attention = *it;
  ASSERT_EQ(attention.inputs.size(), 4u);
  EXPECT_EQ(fused.value(attention.inputs[3]).dtype, DType::kF32);
}

TEST(FuseAttention, FusesScaleOnQAndK) {
  AttentionOptions options;
  options.scale_q_and_k = true;
  Graph fused = expect_fused(attention_graph(options), fuse_attention_pass(),
                             "Attention", 1, attention_feeds(true));
  EXPECT_NEAR(fused.nodes[0].attr("scale")->as_float(), 1 / std::sqrt(8.0),
              1e-6);
}

// torch.onnx.export(dynamo=True): K^T through a flattened 3-D transpose,
// Q and K^T each scaled, and the softmax's NaN guard.
TEST(FuseAttention, FusesTheDynamoExportersForm) {
  AttentionOptions dynamo;
  dynamo.dynamo_key = true;
  dynamo.scale_q_and_k = true;
  dynamo.nan_guard = true;
  Graph fused = expect_fused(attention_graph(dynamo), fuse_attention_pass(),
                             "Attention", 1, attention_feeds(true));
  EXPECT_EQ(count_ops(fused, "IsNaN"), 0u);
  EXPECT_EQ(count_ops(fused, "Transpose"), 0u);
  EXPECT_NEAR(fused.nodes.back().attr("scale")->as_float(),
              1.0 / std::sqrt(8.0), 1e-6);
  // A flattening that is no transpose of K, and a guard that is no 0.
  AttentionOptions reinterpreted = dynamo;
  reinterpreted.flat_as = {kHeads, kDim, kLen};
  expect_unchanged(attention_graph(reinterpreted), fuse_attention_pass());
  AttentionOptions one = dynamo;
  one.guard_value = 1.0f;
  expect_unchanged(attention_graph(one), fuse_attention_pass());
}

TEST(FuseAttention, LeavesOtherPatternsAlone) {
  AttentionOptions axis;
  axis.softmax_axis = 2;
  expect_unchanged(attention_graph(axis), fuse_attention_pass());
  AttentionOptions weak_fill;
  weak_fill.mask = Mask::kBool;
  weak_fill.fill = -1.0f;
  expect_unchanged(attention_graph(weak_fill), fuse_attention_pass());
  AttentionOptions vector_scale;
  vector_scale.scale_q_and_k = true;
  vector_scale.vector_scale = true;
  expect_unchanged(attention_graph(vector_scale), fuse_attention_pass());
  // The probabilities are read outside the pattern: fusing would lose them.
  AttentionOptions probs;
  probs.probs_output = true;
  expect_unchanged(attention_graph(probs), fuse_attention_pass());
}

// Hugging Face repeat_kv: (1,2,T,8) -> Unsqueeze 2 -> Expand (1,2,2,T,8) ->
// Reshape (1,4,T,8); `interleave` false tiles the heads instead (Unsqueeze
// at 1), which Attention's head sharing does not match.
ValueId repeat_kv(GraphBuilder& b, ValueId x, const std::string& name,
                  int64_t len, bool interleave) {
  ValueId axes = ints(b, name + "_axes", {interleave ? 2 : 1});
  ValueId expand_shape = ints(b, name + "_expand", {1, 2, 2, len, kDim});
  ValueId shape = ints(b, name + "_shape", {1, kHeads, len, kDim});
  ValueId expanded =
      b.add("Expand", {b.add("Unsqueeze", {x, axes}), expand_shape});
  return b.add("Reshape", {expanded, shape});
}

// A GQA decode step with a KV cache: q (1,4,1,8), k/v (1,2,1,8) appended to
// past (1,2,5,8); the presents are graph outputs and state.
Graph decode_graph(bool interleave, bool with_cache) {
  GraphBuilder b("decode");
  int64_t past_len = with_cache ? kLen : 0;
  int64_t total = past_len + 1;
  ValueId q = b.input("q", DType::kF32, {1, kHeads, 1, kDim});
  ValueId k = b.input("k", DType::kF32, {1, 2, 1, kDim});
  ValueId v = b.input("v", DType::kF32, {1, 2, 1, kDim});
  ValueId past_k = kNoValue;
  ValueId past_v = kNoValue;
  if (with_cache) {
    past_k = b.input("past_key", DType::kF32, {1, 2, kLen, kDim});
    past_v = b.input("past_value", DType::kF32, {1, 2, kLen, kDim});
    k = b.add("Concat", {past_k, k}, {{"axis", Attribute(-2)}},
              NodeOptions{"present_key"});
    v = b.add("Concat", {past_v, v}, {{"axis", Attribute(-2)}},
              NodeOptions{"present_value"});
  }
  ValueId kk = repeat_kv(b, k, "rk", total, interleave);
  ValueId vv = repeat_kv(b, v, "rv", total, interleave);
  ValueId s = b.add("MatMul", {q, transpose(b, kk, {0, 1, 3, 2})});
  s = b.add("Div", {s, b.constant("root", Tensor::scalar(std::sqrt(8.0f)))});
  ValueId p = b.add("Softmax", {s}, {{"axis", Attribute(-1)}});
  // softmax(dtype=float32).to(q.dtype) exports two Casts to f32.
  p = b.add("Cast", {p}, {{"to", Attribute(1)}});
  p = b.add("Cast", {p}, {{"to", Attribute(1)}});
  b.output(b.add("MatMul", {p, vv}), "y");
  if (with_cache) {
    b.output(k);
    b.output(v);
    b.state_pair(past_k, k);
    b.state_pair(past_v, v);
  }
  return build_or_die(std::move(b));
}

std::map<std::string, Tensor> decode_feeds() {
  return {{"q", random_tensor({1, kHeads, 1, kDim}, 21)},
          {"k", random_tensor({1, 2, 1, kDim}, 22)},
          {"v", random_tensor({1, 2, 1, kDim}, 23)},
          {"past_key", random_tensor({1, 2, kLen, kDim}, 24)},
          {"past_value", random_tensor({1, 2, kLen, kDim}, 25)}};
}

TEST(FuseAttention, FusesGqaWithKvCache) {
  Graph fused = expect_fused(decode_graph(true, true), fuse_attention_pass(),
                             "Attention", 1, decode_feeds());
  ASSERT_EQ(fused.nodes.size(), 1u);
  const Node& node = fused.nodes[0];
  ASSERT_EQ(node.inputs.size(), 6u);
  EXPECT_EQ(fused.value(node.inputs[1]).name, "k");
  EXPECT_EQ(node.inputs[3], kNoValue);
  EXPECT_EQ(fused.value(node.inputs[4]).name, "past_key");
  ASSERT_EQ(node.outputs.size(), 3u);
  EXPECT_EQ(fused.value(node.outputs[1]).name, "present_key");
  ASSERT_EQ(fused.state_pairs.size(), 2u);
  EXPECT_EQ(fused.value(fused.state_pairs[1].output).name, "present_value");
}

// GPT-2's decode export reads the key length for its mask from the Shape
// of the KV-cache Concat, which the fused node would produce: fusing would
// make a cycle, so the pass must leave the graph as it is.
TEST(FuseAttention, LeavesAMaskComputedFromThePresentAlone) {
  GraphBuilder b("decode_mask");
  ValueId q = b.input("q", DType::kF32, {1, 2, 1, kDim});
  ValueId k = b.input("k", DType::kF32, {1, 2, 1, kDim});
  ValueId v = b.input("v", DType::kF32, {1, 2, 1, kDim});
  ValueId past_k = b.input("past_key", DType::kF32, {1, 2, kLen, kDim});
  ValueId past_v = b.input("past_value", DType::kF32, {1, 2, kLen, kDim});
  k = b.add("Concat", {past_k, k}, {{"axis", Attribute(-2)}},
            NodeOptions{"present_key"});
  v = b.add("Concat", {past_v, v}, {{"axis", Attribute(-2)}},
            NodeOptions{"present_value"});
  ValueId s = b.add("MatMul", {q, transpose(b, k, {0, 1, 3, 2})});
  // mask = bias[..., :Tk] with Tk = present_key.shape[2]
  ValueId key_len =
      b.add("Shape", {k},
            {{"start", Attribute(int64_t{2})}, {"end", Attribute(int64_t{3})}});
  ValueId bias = b.constant("bias", random_tensor({1, 1, 1, 16}, 31));
  ValueId mask = b.add(
      "Slice", {bias, ints(b, "starts", {0}), key_len, ints(b, "axes", {3})});
  ValueId p =
      b.add("Softmax", {b.add("Add", {s, mask})}, {{"axis", Attribute(-1)}});
  b.output(b.add("MatMul", {p, v}), "y");
  b.output(k);
  b.output(v);
  expect_unchanged(build_or_die(std::move(b)), fuse_attention_pass());
}

TEST(FuseAttention, FusesGqaWithoutCache) {
  std::map<std::string, Tensor> feeds = decode_feeds();
  feeds.erase("past_key");
  feeds.erase("past_value");
  Graph fused = expect_fused(decode_graph(true, false), fuse_attention_pass(),
                             "Attention", 1, feeds);
  ASSERT_EQ(fused.nodes.size(), 1u);
  EXPECT_EQ(fused.value(fused.nodes[0].inputs[2]).name, "v");
}

TEST(FuseAttention, KeepsATiledRepeatOutsideTheFusedNode) {
  // Tiled heads are not repeat_kv: Attention reads the repeated K/V as
  // they are and the cache Concat stays.
  Graph fused = expect_fused(decode_graph(false, true), fuse_attention_pass(),
                             "Attention", 1, decode_feeds());
  EXPECT_EQ(count_ops(fused, "Reshape"), 2u);
  EXPECT_EQ(count_ops(fused, "Concat"), 2u);
  for (const Node& node : fused.nodes) {
    if (node.op == "Attention") {
      EXPECT_EQ(node.inputs.size(), 3u);
    }
  }
}

// BERT: x (1,5,32) viewed as (1,5,4,8); Q = V = Transpose(0,2,1,3) and
// K^T = Transpose(0,2,3,1) of the same view.
TEST(FuseAttention, FusesBertTransposes) {
  GraphBuilder b("bert");
  ValueId x = b.input("x", DType::kF32, {1, kLen, kHeads * kDim});
  ValueId heads =
      b.add("Reshape", {x, ints(b, "shape", {1, kLen, kHeads, kDim})});
  ValueId qv = transpose(b, heads, {0, 2, 1, 3});
  ValueId kt = transpose(b, heads, {0, 2, 3, 1});
  ValueId s = b.add("Div", {b.add("MatMul", {qv, kt}),
                            b.constant("root", Tensor::scalar(2.0f))});
  s = b.add("Add", {s, b.input("mask", DType::kF32, {1, 1, 1, kLen})});
  ValueId p = b.add("Softmax", {s}, {{"axis", Attribute(3)}});
  b.output(b.add("MatMul", {p, qv}), "y");
  Graph graph = build_or_die(std::move(b));
  Graph fused = expect_fused(graph, fuse_attention_pass(), "Attention", 1,
                             {{"x", random_tensor({1, kLen, 32}, 31)},
                              {"mask", random_tensor({1, 1, 1, kLen}, 32)}});
  EXPECT_EQ(count_ops(fused, "Transpose"), 2u);
  EXPECT_EQ(count_ops(fused, "MatMul"), 0u);
}

}  // namespace
}  // namespace seqrt
