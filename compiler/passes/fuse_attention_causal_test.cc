// The causal mask of GPT-2 models exported with dynamic axes (Hugging Face
// GPT2Attention._attn, as torch 1.13 exports it at opset 17): the fused
// Attention takes is_causal instead of the run-time mask, with and without
// a KV cache; masks that are not the end-aligned triangle are left alone.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "compiler/passes/pass_test_util.h"

namespace seqrt {
namespace {

using pass_testing::build_or_die;
using pass_testing::count_ops;
using pass_testing::expect_fused;
using pass_testing::expect_unchanged;
using pass_testing::random_tensor;

constexpr int64_t kHeads = 2;
constexpr int64_t kDim = 8;
constexpr int64_t kMaxPositions = 16;  // the tril buffer is (1,1,16,16)
constexpr int64_t kLen = 5;

enum class Triangle { kLower, kUpper };

struct CausalOptions {
  bool with_past = true;
  bool gather_dims = false;  // x.size(2) as Gather(Shape) rather than Slice
  Triangle triangle = Triangle::kLower;
  bool top_aligned = false;  // rows [0, Tq) instead of [Tk - Tq, Tk)
  // Hugging Face's scale, torch.full([], v.size(-1) ** 0.5): computed from
  // V's fixed last dim at run time rather than a constant.
  bool computed_scale = false;
  // GPT-2 without a cache as torch exports it: k is (1,seq,H,d), K^T one
  // Transpose(k, 0,2,3,1), and the mask reads K = Transpose(k, 0,2,1,3).
  bool merged_key_transpose = false;
};

// A constant named after its value id, so that names stay unique.
ValueId constant(GraphBuilder& b, Tensor tensor) {
  return b.constant("c" + std::to_string(b.graph().values.size()),
                    std::move(tensor));
}

ValueId ints(GraphBuilder& b, std::vector<int64_t> values) {
  const int64_t n = static_cast<int64_t>(values.size());
  return constant(b, Tensor::from_vector<int64_t>({n}, values));
}

// x.size(-2) as torch exports it: Squeeze(Slice(Shape(x), [-2], [-1], [0]))
// or Gather(Shape(x), 2).
ValueId length_of(GraphBuilder& b, ValueId x, bool gather) {
  ValueId shape = b.add("Shape", {x});
  if (gather) {
    return b.add("Gather", {shape, constant(b, Tensor::scalar(int64_t{2}))},
                 {{"axis", Attribute(int64_t{0})}});
  }
  ValueId one =
      b.add("Slice", {shape, ints(b, {-2}), ints(b, {-1}), ints(b, {0})});
  return b.add("Squeeze", {one, ints(b, {0})});
}

ValueId unsqueeze0(GraphBuilder& b, ValueId scalar) {
  return b.add("Unsqueeze", {scalar, ints(b, {0})});
}

// causal_mask = bias[:, :, Tk - Tq : Tk, :Tk] as two Slices of the buffer.
ValueId causal_mask(GraphBuilder& b, ValueId q, ValueId k,
                    const CausalOptions& options) {
  std::vector<bool> tril;
  for (int64_t i = 0; i < kMaxPositions; ++i) {
    for (int64_t j = 0; j < kMaxPositions; ++j) {
      tril.push_back(options.triangle == Triangle::kLower ? j <= i : j >= i);
    }
  }
  ValueId bias = b.constant(
      "bias",
      Tensor::from_vector<bool>({1, 1, kMaxPositions, kMaxPositions}, tril));
  ValueId keys = length_of(b, k, options.gather_dims);
  ValueId queries = length_of(b, q, options.gather_dims);
  ValueId end = unsqueeze0(b, keys);
  ValueId start = options.top_aligned
                      ? ints(b, {0})
                      : unsqueeze0(b, b.add("Sub", {keys, queries}));
  ValueId rows_end = options.top_aligned ? unsqueeze0(b, queries) : end;
  ValueId rows =
      b.add("Slice", {bias, start, rows_end, ints(b, {2}), ints(b, {1})});
  return b.add("Slice", {rows, ints(b, {0}), end, ints(b, {3}), ints(b, {1})});
}

// q, k, v (1,2,seq,8); with a past, K and V are Concat(past, new) on the
// sequence axis and returned as present_key / present_value.
Graph gpt2_attention(const CausalOptions& options) {
  GraphBuilder b("gpt2_attention");
  std::vector<Dim> dims = {1, kHeads, Dim::symbol("seq"), kDim};
  std::vector<Dim> past_dims = {1, kHeads, Dim::symbol("past"), kDim};
  ValueId q = b.input("q", DType::kF32, dims);
  ValueId k =
      b.input("k", DType::kF32,
              options.merged_key_transpose
                  ? std::vector<Dim>{1, Dim::symbol("seq"), kHeads, kDim}
                  : dims);
  ValueId v = b.input("v", DType::kF32, dims);
  ValueId kt = kNoValue;
  if (options.merged_key_transpose) {
    kt = b.add("Transpose", {k},
               {{"perm", Attribute(std::vector<int64_t>{0, 2, 3, 1})}});
    k = b.add("Transpose", {k},
              {{"perm", Attribute(std::vector<int64_t>{0, 2, 1, 3})}});
  }
  if (options.with_past) {
    k = b.add("Concat", {b.input("past_key", DType::kF32, past_dims), k},
              {{"axis", Attribute(int64_t{-2})}}, NodeOptions{"present_key"});
    v = b.add("Concat", {b.input("past_value", DType::kF32, past_dims), v},
              {{"axis", Attribute(int64_t{-2})}}, NodeOptions{"present_value"});
  }
  if (kt == kNoValue) {
    kt = b.add("Transpose", {k},
               {{"perm", Attribute(std::vector<int64_t>{0, 1, 3, 2})}});
  }
  ValueId root = b.constant("root", Tensor::scalar(std::sqrt(float{kDim})));
  if (options.computed_scale) {
    ValueId shape = b.add("Shape", {v});
    ValueId last =
        b.add("Squeeze",
              {b.add("Slice", {shape, ints(b, {-1}),
                               ints(b, {std::numeric_limits<int64_t>::max()}),
                               ints(b, {0})}),
               ints(b, {0})});
    ValueId d = b.add("Cast", {last}, {{"to", Attribute(int64_t{1})}});
    ValueId half = constant(b, Tensor::scalar(0.5f));
    ValueId zero = b.add("ConstantOfShape", {ints(b, {})});
    root = b.add("Add", {zero, b.add("Pow", {d, half})});
  }
  ValueId s = b.add("Div", {b.add("MatMul", {q, kt}), root});
  s = b.add("Cast", {s}, {{"to", Attribute(int64_t{1})}});  // w.to(w.dtype)
  ValueId fill =
      b.constant("fill", Tensor::scalar(std::numeric_limits<float>::lowest()));
  s = b.add("Where", {causal_mask(b, q, k, options), s, fill});
  ValueId p = b.add("Softmax", {s}, {{"axis", Attribute(int64_t{-1})}});
  b.output(b.add("MatMul", {p, v}), "y");
  if (options.with_past) {
    b.output(k);
    b.output(v);
  }
  return build_or_die(std::move(b));
}

std::map<std::string, Tensor> feeds(int64_t past) {
  std::map<std::string, Tensor> feeds = {
      {"q", random_tensor({1, kHeads, kLen, kDim}, 41)},
      {"k", random_tensor({1, kHeads, kLen, kDim}, 42)},
      {"v", random_tensor({1, kHeads, kLen, kDim}, 43)}};
  if (past >= 0) {
    feeds["past_key"] = random_tensor({1, kHeads, past, kDim}, 44);
    feeds["past_value"] = random_tensor({1, kHeads, past, kDim}, 45);
  }
  return feeds;
}

const Node& attention(const Graph& graph) {
  for (const Node& node : graph.nodes) {
    if (node.op == "Attention") return node;
  }
  ADD_FAILURE() << "no Attention node";
  return graph.nodes.front();
}

TEST(FuseAttentionCausal, RunTimeSlicedTriangleBecomesIsCausal) {
  const Graph graph = gpt2_attention({});
  for (int64_t past : {0, 3}) {
    SCOPED_TRACE(past);
    Graph fused =
        expect_fused(graph, fuse_attention_pass(), "Attention", 1, feeds(past));
    const Node& node = attention(fused);
    ASSERT_NE(node.attr("is_causal"), nullptr);
    EXPECT_EQ(node.attr("is_causal")->as_int(), 1);
    ASSERT_EQ(node.inputs.size(), 6u);
    EXPECT_EQ(node.inputs[3], kNoValue);  // no mask
    EXPECT_EQ(fused.value(node.inputs[4]).name, "past_key");
    EXPECT_EQ(count_ops(fused, "Where"), 0u);
    EXPECT_FLOAT_EQ(node.attr("scale")->as_float(), 1.0f / std::sqrt(8.0f));
  }
}

TEST(FuseAttentionCausal, WithoutCacheAndWithGatheredLengths) {
  CausalOptions options;
  options.with_past = false;
  options.gather_dims = true;
  Graph fused = expect_fused(gpt2_attention(options), fuse_attention_pass(),
                             "Attention", 1, feeds(-1));
  const Node& node = attention(fused);
  EXPECT_EQ(node.inputs.size(), 3u);
  ASSERT_NE(node.attr("is_causal"), nullptr);
  EXPECT_EQ(node.attr("is_causal")->as_int(), 1);
}

TEST(FuseAttentionCausal, MergedKeyTransposeOfAnExportWithoutCache) {
  CausalOptions options;
  options.with_past = false;
  options.merged_key_transpose = true;
  std::map<std::string, Tensor> inputs = feeds(-1);
  inputs["k"] = random_tensor({1, kLen, kHeads, kDim}, 46);
  Graph fused = expect_fused(gpt2_attention(options), fuse_attention_pass(),
                             "Attention", 1, inputs);
  const Node& node = attention(fused);
  EXPECT_EQ(node.inputs.size(), 3u);  // no mask
  ASSERT_NE(node.attr("is_causal"), nullptr);
  EXPECT_EQ(node.attr("is_causal")->as_int(), 1);
}

TEST(FuseAttentionCausal, ScaleComputedFromTheHeadDim) {
  CausalOptions options;
  options.computed_scale = true;
  Graph fused = expect_fused(gpt2_attention(options), fuse_attention_pass(),
                             "Attention", 1, feeds(2));
  EXPECT_NEAR(attention(fused).attr("scale")->as_float(), 1.0 / std::sqrt(8.0),
              1e-7);
}

TEST(FuseAttentionCausal, LeavesMasksThatAreNotTheEndAlignedTriangle) {
  CausalOptions upper;
  upper.triangle = Triangle::kUpper;
  expect_unchanged(gpt2_attention(upper), fuse_attention_pass());
  // Rows [0, Tq) differ from the causal rows once a past is cached.
  CausalOptions top;
  top.top_aligned = true;
  expect_unchanged(gpt2_attention(top), fuse_attention_pass());
}

}  // namespace
}  // namespace seqrt
