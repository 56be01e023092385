// Which graphs `seqrt generate` can feed, and the feeds it makes: ids,
// attention_mask over past + new tokens, position_ids from the past length.
#include "tools/generate/decoder_interface.h"

#include <gtest/gtest.h>

namespace seqrt {
namespace {

ValueId add(Graph& graph, const std::string& name, DType dtype, Shape shape) {
  return graph.add_value({name, dtype, std::move(shape)});
}

// A decoder export's interface: the inputs named, logits (1, seq, 50) and
// one state pair unless `stateless`.
Graph decoder(const std::vector<std::pair<std::string, DType>>& inputs,
              bool stateless = false) {
  Graph graph;
  for (const auto& [name, dtype] : inputs) {
    graph.inputs.push_back(
        add(graph, name, dtype, Shape({1, Dim::symbol("seq")})));
  }
  graph.outputs.push_back(
      add(graph, "logits", DType::kF32, Shape({1, Dim::symbol("seq"), 50})));
  if (stateless) return graph;
  StatePair pair;
  pair.input = add(graph, "past_key_values.0.key", DType::kF32,
                   Shape({1, 2, Dim::symbol("past"), 4}));
  pair.output = add(graph, "present.0.key", DType::kF32,
                    Shape({1, 2, Dim::symbol("total"), 4}));
  graph.inputs.push_back(pair.input);
  graph.outputs.push_back(pair.output);
  graph.state_pairs.push_back(pair);
  return graph;
}

std::vector<int64_t> values(const Tensor& tensor) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < tensor.num_elements(); ++i) {
    out.push_back(tensor.dtype() == DType::kI32 ? tensor.data_as<int32_t>()[i]
                                                : tensor.data_as<int64_t>()[i]);
  }
  return out;
}

TEST(DecoderInterface, FeedsMaskAndPositionsAfterThePast) {
  Graph graph = decoder({{"input_ids", DType::kI64},
                         {"attention_mask", DType::kI64},
                         {"position_ids", DType::kI32}});
  Result<DecoderInterface> found = find_decoder_interface(graph, "m.onnx");
  ASSERT_TRUE(found.is_ok()) << found.status().message();
  EXPECT_EQ(found->scored_tokens, std::optional<int64_t>(50));
  std::map<std::string, Tensor> feeds = found->feeds({7, 8}, 3);
  ASSERT_EQ(feeds.size(), 3u);
  EXPECT_EQ(values(feeds.at("input_ids")), (std::vector<int64_t>{7, 8}));
  EXPECT_EQ(values(feeds.at("attention_mask")),
            (std::vector<int64_t>{1, 1, 1, 1, 1}));
  EXPECT_EQ(feeds.at("position_ids").dtype(), DType::kI32);
  EXPECT_EQ(values(feeds.at("position_ids")), (std::vector<int64_t>{3, 4}));
  // A prefill: no past, the mask as long as the prompt.
  feeds = found->feeds({1, 2, 3}, 0);
  EXPECT_EQ(values(feeds.at("attention_mask")),
            (std::vector<int64_t>{1, 1, 1}));
  EXPECT_EQ(values(feeds.at("position_ids")), (std::vector<int64_t>{0, 1, 2}));
}

TEST(DecoderInterface, OnlyTheIdsAreNeeded) {
  Result<DecoderInterface> found =
      find_decoder_interface(decoder({{"input_ids", DType::kI64}}), "m.onnx");
  ASSERT_TRUE(found.is_ok()) << found.status().message();
  EXPECT_EQ(found->feeds({5}, 9).size(), 1u);
}

void expect_error(const Graph& graph, const std::string& part) {
  Result<DecoderInterface> found = find_decoder_interface(graph, "m.onnx");
  ASSERT_FALSE(found.is_ok());
  EXPECT_NE(found.status().message().find(part), std::string::npos)
      << found.status().message();
  EXPECT_NE(found.status().message().find("'m.onnx'"), std::string::npos);
}

TEST(DecoderInterface, RefusesWhatItCannotFeed) {
  expect_error(
      decoder({{"input_ids", DType::kI64}, {"use_cache_branch", DType::kBool}}),
      "generate cannot feed input 'use_cache_branch'");
  expect_error(decoder({{"attention_mask", DType::kI64}}),
               "is not a generative model");
  expect_error(decoder({{"input_ids", DType::kF32}}),
               "input 'input_ids' must be i64 of rank 2");
  expect_error(
      decoder({{"input_ids", DType::kI64}, {"attention_mask", DType::kF32}}),
      "input 'attention_mask' is f32, expected i64 or i32");
  expect_error(decoder({{"input_ids", DType::kI64}}, /*stateless=*/true),
               "has no state pairs");
}

}  // namespace
}  // namespace seqrt
