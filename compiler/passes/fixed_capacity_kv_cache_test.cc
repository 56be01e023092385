// fixed_capacity_kv_cache: the concatenating KV cache of a fused attention
// becomes TensorScatter into a cache of fixed capacity plus
// nonpad_kv_seqlen; graphs it cannot hold that way are refused, saying why.
// runtime/stream_test.cc and tests/zoo/test_kv_cache.py check the outputs.
#include "compiler/passes/fixed_capacity_kv_cache.h"

#include <gtest/gtest.h>

#include "compiler/passes/pass_test_util.h"
#include "ops/sequence/attention.h"

namespace seqrt {
namespace {

using pass_testing::build_or_die;
using pass_testing::count_ops;

constexpr int64_t kHeads = 2, kDim = 4;

struct Options {
  bool cache_read_by_relu = false;
  int64_t mask_keys = 0;          // > 0: a float mask of that many keys
  bool cut_mask_to_keys = false;  // mask[..., :past+seq] of an attention_mask
};

Options read_by_relu() {
  Options o;
  o.cache_read_by_relu = true;
  return o;
}
Options fixed_mask(int64_t keys) {
  Options o;
  o.mask_keys = keys;
  return o;
}
Options cut_mask() {
  Options o;
  o.cut_mask_to_keys = true;
  return o;
}

// y = Attention(q, k, v, mask?, past_key, past_value), "cached" =
// Shape(past_key)[2:3] as position ids read it.
Graph decoder_graph(const Options& o) {
  GraphBuilder b("decoder");
  Shape qkv{Dim::symbol("batch"), kHeads, Dim::symbol("seq"), kDim};
  Shape cache{Dim::symbol("batch"), kHeads, Dim::symbol("past"), kDim};
  ValueId q = b.input("q", DType::kF32, qkv);
  ValueId k = b.input("k", DType::kF32, qkv);
  ValueId v = b.input("v", DType::kF32, qkv);
  ValueId past_key = b.input("past_key", DType::kF32, cache);
  ValueId past_value = b.input("past_value", DType::kF32, cache);
  ValueId cached =
      b.add("Shape", {past_key},
            {{"start", Attribute(int64_t{2})}, {"end", Attribute(int64_t{3})}});
  ValueId mask = kNoValue;
  if (o.mask_keys > 0) {
    mask = b.constant("mask",
                      pass_testing::random_tensor({1, 1, 1, o.mask_keys}, 1));
  } else if (o.cut_mask_to_keys) {
    ValueId full = b.input("attention_mask", DType::kF32,
                           {Dim::symbol("batch"), Dim::symbol("total")});
    ValueId axes =
        b.constant("axes", Tensor::from_vector<int64_t>({2}, {1, 2}));
    ValueId wide = b.add("Unsqueeze", {full, axes});
    ValueId seq = b.add(
        "Shape", {q},
        {{"start", Attribute(int64_t{2})}, {"end", Attribute(int64_t{3})}});
    ValueId keys = b.add("Add", {cached, seq});
    ValueId zero = b.constant("zero", Tensor::from_vector<int64_t>({1}, {0}));
    ValueId three = b.constant("three", Tensor::from_vector<int64_t>({1}, {3}));
    mask = b.add("Slice", {wide, zero, keys, three});
  }
  NodeOptions options;
  options.domain = kSeqrtDomain;
  options.output_names = {"y", "present_key", "present_value"};
  auto outs = b.add_node("Attention", {q, k, v, mask, past_key, past_value},
                         {{"is_causal", int64_t{1}}}, 3, options);
  for (ValueId id : outs) b.output(id);
  b.output(cached, "cached");
  if (o.cache_read_by_relu) b.output(b.add("Relu", {past_value}), "relu");
  b.state_pair(past_key, outs[1]);
  b.state_pair(past_value, outs[2]);
  Graph graph = build_or_die(std::move(b));
  Status typed = infer_graph(graph);
  EXPECT_TRUE(typed.is_ok()) << typed.to_string();
  return graph;
}

const Value* find_value(const Graph& graph, const std::string& name) {
  for (const Value& value : graph.values) {
    if (value.name == name) return &value;
  }
  return nullptr;
}

TEST(FixedCapacityKvCache, WritesTheCachesInPlaceAndReadsTheirLength) {
  Result<KvCacheRewrite> rewrite =
      fixed_capacity_kv_cache(decoder_graph(cut_mask()), 16);
  ASSERT_TRUE(rewrite.is_ok()) << rewrite.status().to_string();
  const Graph& graph = rewrite->graph;
  EXPECT_EQ(count_ops(graph, "TensorScatter"), 2u);
  EXPECT_EQ(graph.state_pairs.size(), 3u);
  EXPECT_EQ(find_value(graph, "past_key")->shape->to_string(),
            "(batch,2,16,4)");
  EXPECT_EQ(find_value(graph, "present_value")->shape->to_string(),
            "(batch,2,16,4)");
  EXPECT_EQ(find_value(graph, kKvLengthInput)->shape->rank(), 0u);
  // The mask keeps its whole width (the padded attention_mask's C keys).
  EXPECT_EQ(find_value(graph, "attention_mask")->shape->to_string(),
            "(batch,16)");
  EXPECT_EQ(rewrite->padded_inputs, std::vector<std::string>{"attention_mask"});
  EXPECT_EQ(rewrite->new_tokens.to_string(), "seq");
  for (const Node& node : graph.nodes) {
    if (node.op != "Attention") continue;
    EXPECT_EQ(node.inputs[kAttnPastKey], kNoValue);
    EXPECT_NE(node.inputs[kAttnNonpadKvSeqlen], kNoValue);
    EXPECT_EQ(graph.value(node.inputs[kAttnMask]).shape->to_string(),
              "(batch,1,1,16)");
  }
}

TEST(FixedCapacityKvCache, RefusesWhatItCannotHold) {
  struct Case {
    Options options;
    int64_t capacity;
    const char* message;
  } cases[] = {
      {read_by_relu(), 8, "is also read by [Relu]"},
      {fixed_mask(5), 8, "spans a fixed 5 keys"},
      {Options(), 0, "capacity must be positive"},
  };
  for (const Case& c : cases) {
    Result<KvCacheRewrite> rewrite =
        fixed_capacity_kv_cache(decoder_graph(c.options), c.capacity);
    ASSERT_FALSE(rewrite.is_ok()) << c.message;
    EXPECT_NE(rewrite.status().message().find(c.message), std::string::npos)
        << rewrite.status().message();
  }
  GraphBuilder b("plain");
  ValueId x = b.input("x", DType::kF32, {2});
  b.output(b.add("Relu", {x}), "y");
  Result<KvCacheRewrite> none =
      fixed_capacity_kv_cache(build_or_die(std::move(b)), 8);
  ASSERT_FALSE(none.is_ok());
  EXPECT_EQ(none.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(none.status().message().find("no seqrt::Attention"),
            std::string::npos)
      << none.status().message();
}

}  // namespace
}  // namespace seqrt
