// A Stream carries the state of stateful sequence ops across runs on every
// compiled backend: prefill of T tokens then single steps equals one run
// over all tokens (DESIGN.md §4), and snapshots restore a state.
#include "runtime/stream.h"

#include <gtest/gtest.h>

#include <cmath>

#include "graph/builder.h"
#include "ops/registry.h"
#include "runtime/backend_registry.h"
#include "testing/random_tensor.h"
#include "tests/device_skip.h"

namespace seqrt {
namespace {

constexpr int64_t kHeads = 2, kDim = 8;

// Tokens [begin, end) of a (1, H, T, d) tensor along T.
Tensor tokens(const Tensor& x, int64_t begin, int64_t end) {
  int64_t t = x.dim(2), d = x.dim(3);
  Tensor out =
      Tensor::allocate(DType::kF32, {1, x.dim(1), end - begin, d}).value();
  for (int64_t h = 0; h < x.dim(1); ++h) {
    for (int64_t i = begin; i < end; ++i) {
      for (int64_t j = 0; j < d; ++j) {
        out.mutable_data_as<float>()[(h * (end - begin) + i - begin) * d + j] =
            x.data_as<float>()[(h * t + i) * d + j];
      }
    }
  }
  return out;
}

void expect_tokens_close(const Tensor& got, const Tensor& whole,
                         int64_t begin) {
  Tensor want = tokens(whole, begin, begin + got.dim(2));
  ASSERT_EQ(got.dims(), want.dims());
  for (int64_t i = 0; i < got.num_elements(); ++i) {
    EXPECT_NEAR(got.data_as<float>()[i], want.data_as<float>()[i], 2e-4)
        << "element " << i << " of the tokens from " << begin;
  }
}

// y, present_state = Retention(q, k, v, past_state), one state pair.
Graph retention_graph() {
  GraphBuilder b("retention_layer");
  Shape qkv{1, kHeads, Dim::symbol("seq"), kDim};
  ValueId q = b.input("q", DType::kF32, qkv);
  ValueId k = b.input("k", DType::kF32, qkv);
  ValueId v = b.input("v", DType::kF32, qkv);
  ValueId past =
      b.input("past_state", DType::kF32, Shape{1, kHeads, kDim, kDim});
  NodeOptions options;
  options.domain = kSeqrtDomain;
  options.output_names = {"y", "present_state"};
  auto outs = b.add_node("Retention", {q, k, v, past}, {}, 2, options);
  b.output(outs[0]);
  b.output(outs[1]);
  b.state_pair(past, outs[1]);
  return std::move(b).build().value();
}

// Causal attention over a KV cache that grows by concatenation; with
// `read_length`, also the output "cached" = Shape(past_key)[2:3], as an
// export's position ids read it.
Graph attention_graph(bool read_length = false) {
  GraphBuilder b("attention_layer");
  Shape qkv{1, kHeads, Dim::symbol("seq"), kDim};
  Shape cache{1, kHeads, Dim::symbol("past"), kDim};
  ValueId q = b.input("q", DType::kF32, qkv);
  ValueId k = b.input("k", DType::kF32, qkv);
  ValueId v = b.input("v", DType::kF32, qkv);
  ValueId past_key = b.input("past_key", DType::kF32, cache);
  ValueId past_value = b.input("past_value", DType::kF32, cache);
  NodeOptions options;
  options.domain = kSeqrtDomain;
  options.output_names = {"y", "present_key", "present_value"};
  auto outs = b.add_node("Attention", {q, k, v, kNoValue, past_key, past_value},
                         {{"is_causal", int64_t{1}}}, 3, options);
  for (ValueId id : outs) b.output(id);
  if (read_length) {
    b.output(b.add("Shape", {past_key},
                   {{"start", Attribute(int64_t{2})},
                    {"end", Attribute(int64_t{3})}}),
             "cached");
  }
  b.state_pair(past_key, outs[1],
               Tensor::allocate(DType::kF32, {1, kHeads, 0, kDim}).value());
  b.state_pair(past_value, outs[2],
               Tensor::allocate(DType::kF32, {1, kHeads, 0, kDim}).value());
  return std::move(b).build().value();
}

constexpr int64_t kCapacity = 32;

// Causal attention over a KV cache of fixed capacity: TensorScatter writes
// the new keys/values at `write_index`, Attention reads the first
// `valid_len` positions (nonpad_kv_seqlen).
Graph fixed_cache_graph() {
  GraphBuilder b("fixed_cache_layer");
  Shape qkv{1, kHeads, Dim::symbol("seq"), kDim};
  Shape cache{1, kHeads, kCapacity, kDim};
  ValueId q = b.input("q", DType::kF32, qkv);
  ValueId k = b.input("k", DType::kF32, qkv);
  ValueId v = b.input("v", DType::kF32, qkv);
  ValueId past_key = b.input("past_key", DType::kF32, cache);
  ValueId past_value = b.input("past_value", DType::kF32, cache);
  ValueId write_index = b.input("write_index", DType::kI64, Shape{1});
  ValueId valid_len = b.input("valid_len", DType::kI64, Shape{1});
  NodeOptions scatter;
  scatter.output_names = {"present_key"};
  ValueId key = b.add_node("TensorScatter", {past_key, k, write_index}, {}, 1,
                           scatter)[0];
  scatter.output_names = {"present_value"};
  ValueId value = b.add_node("TensorScatter", {past_value, v, write_index}, {},
                             1, scatter)[0];
  NodeOptions attention;
  attention.domain = kSeqrtDomain;
  attention.output_names = {"y"};
  ValueId y = b.add_node(
      "Attention", {q, key, value, kNoValue, kNoValue, kNoValue, valid_len},
      {{"is_causal", int64_t{1}}}, 1, attention)[0];
  b.output(y);
  b.output(key);
  b.output(value);
  b.state_pair(past_key, key);
  b.state_pair(past_value, value);
  return std::move(b).build().value();
}

// Tokens [begin, end) of q, k and v with the cache positions they fill.
std::map<std::string, Tensor> cache_feeds(const Tensor& q, const Tensor& k,
                                          const Tensor& v, int64_t begin,
                                          int64_t end) {
  return {{"q", tokens(q, begin, end)},
          {"k", tokens(k, begin, end)},
          {"v", tokens(v, begin, end)},
          {"write_index", Tensor::from_vector<int64_t>({1}, {begin})},
          {"valid_len", Tensor::from_vector<int64_t>({1}, {end})}};
}

const void* held_key_data(const Stream& stream) {
  return stream.snapshot().at("past_key").data();
}

class StreamTest : public ::testing::TestWithParam<std::string> {
 protected:
  // Declared: no TensorScatter kernel on Vulkan (backends/vulkan/README).
  void expect_no_vulkan_tensor_scatter(const Status& status) {
    if (device_skip::may_skip_for_no_device("vulkan", status)) {
      GTEST_SKIP() << status.message();
    }
    ASSERT_EQ(status.code(), StatusCode::kUnsupported);
    EXPECT_NE(status.message().find("[TensorScatter]"), std::string::npos)
        << status.message();
  }

  void check_prefill_then_steps(Graph graph, const char* op,
                                int64_t kv_cache_capacity = 0) {
    ASSERT_NE(OpRegistry::global().find(kSeqrtDomain, op), nullptr) << op;
    SessionOptions options;
    options.backend = GetParam();
    options.kv_cache_capacity = kv_cache_capacity;
    auto session = Session::create(std::move(graph), options);
    if (kv_cache_capacity > 0 && GetParam() == "vulkan") {
      expect_no_vulkan_tensor_scatter(session.status());
      return;
    }
    // Only a backend with no device here may skip (tests/device_skip.h).
    SEQRT_SKIP_IF_NO_DEVICE(GetParam(), session.status());
    const int64_t total = 21, prompt = 16;
    Tensor q = random_uniform_f32({1, kHeads, total, kDim}, 1);
    Tensor k = random_uniform_f32({1, kHeads, total, kDim}, 2);
    Tensor v = random_uniform_f32({1, kHeads, total, kDim}, 3);

    Stream whole(**session);
    auto all = whole.run({{"q", q}, {"k", k}, {"v", v}});
    ASSERT_TRUE(all.is_ok()) << all.status().to_string();

    Stream parts(**session);
    auto first = parts.run({{"q", tokens(q, 0, prompt)},
                            {"k", tokens(k, 0, prompt)},
                            {"v", tokens(v, 0, prompt)}});
    ASSERT_TRUE(first.is_ok()) << first.status().to_string();
    expect_tokens_close(first->at("y"), all->at("y"), 0);
    auto saved = parts.snapshot();
    for (int64_t t = prompt; t < total; ++t) {
      auto step = parts.run({{"q", tokens(q, t, t + 1)},
                             {"k", tokens(k, t, t + 1)},
                             {"v", tokens(v, t, t + 1)}});
      ASSERT_TRUE(step.is_ok()) << step.status().to_string();
      expect_tokens_close(step->at("y"), all->at("y"), t);
    }
    // Back to the state after the prompt: the first step repeats exactly.
    ASSERT_TRUE(parts.restore(saved).is_ok());
    auto again = parts.run({{"q", tokens(q, prompt, prompt + 1)},
                            {"k", tokens(k, prompt, prompt + 1)},
                            {"v", tokens(v, prompt, prompt + 1)}});
    ASSERT_TRUE(again.is_ok()) << again.status().to_string();
    expect_tokens_close(again->at("y"), all->at("y"), prompt);
  }
};

TEST_P(StreamTest, RetentionPrefillThenStepsEqualsWhole) {
  check_prefill_then_steps(retention_graph(), "Retention");
}

TEST_P(StreamTest, AttentionKvCachePrefillThenStepsEqualsWhole) {
  check_prefill_then_steps(attention_graph(), "Attention");
}

// The concatenating cache run in its fixed-capacity form
// (SessionOptions::kv_cache_capacity) gives the same outputs and
// snapshots of the graph's own form.
TEST_P(StreamTest, AttentionKvCacheAtAFixedCapacityEqualsWhole) {
  check_prefill_then_steps(attention_graph(), "Attention", kCapacity);
}

TEST_P(StreamTest, FixedCapacityCachePrefillThenStepsEqualsWhole) {
  SessionOptions options;
  options.backend = GetParam();
  auto session = Session::create(fixed_cache_graph(), options);
  if (GetParam() == "vulkan") {
    expect_no_vulkan_tensor_scatter(session.status());
    return;
  }
  SEQRT_SKIP_IF_NO_DEVICE(GetParam(), session.status());
  const int64_t total = 21, prompt = 16;
  Tensor q = random_uniform_f32({1, kHeads, total, kDim}, 4);
  Tensor k = random_uniform_f32({1, kHeads, total, kDim}, 5);
  Tensor v = random_uniform_f32({1, kHeads, total, kDim}, 6);

  Stream whole(**session);
  auto all = whole.run(cache_feeds(q, k, v, 0, total));
  ASSERT_TRUE(all.is_ok()) << all.status().to_string();
  // The state stays with the Stream; only y comes back.
  EXPECT_EQ(all->count("present_key"), 0u);

  Stream parts(**session);
  auto first = parts.run(cache_feeds(q, k, v, 0, prompt));
  ASSERT_TRUE(first.is_ok()) << first.status().to_string();
  expect_tokens_close(first->at("y"), all->at("y"), 0);
  for (int64_t t = prompt; t < total; ++t) {
    auto step = parts.run(cache_feeds(q, k, v, t, t + 1));
    ASSERT_TRUE(step.is_ok()) << step.status().to_string();
    expect_tokens_close(step->at("y"), all->at("y"), t);
  }
}

TEST(Stream, CpuWritesTheFixedCapacityCacheInPlace) {
  SessionOptions options;
  options.backend = "cpu";
  auto session = Session::create(fixed_cache_graph(), options);
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  Tensor q = random_uniform_f32({1, kHeads, 3, kDim}, 7);
  Tensor k = random_uniform_f32({1, kHeads, 3, kDim}, 8);
  Tensor v = random_uniform_f32({1, kHeads, 3, kDim}, 9);
  // By default a step keeps the state it started from (so that a failed
  // step leaves it), and the cache is written into a copy.
  Stream kept(**session);
  ASSERT_TRUE(kept.run(cache_feeds(q, k, v, 0, 1)).is_ok());
  const void* first = held_key_data(kept);
  ASSERT_TRUE(kept.run(cache_feeds(q, k, v, 1, 2)).is_ok());
  EXPECT_NE(held_key_data(kept), first);

  Stream stream(**session);
  stream.set_update_state_in_place(true);
  ASSERT_TRUE(stream.run(cache_feeds(q, k, v, 0, 1)).is_ok());
  const void* cache = held_key_data(stream);
  ASSERT_TRUE(stream.run(cache_feeds(q, k, v, 1, 2)).is_ok());
  EXPECT_EQ(held_key_data(stream), cache) << "the step copied the cache";
  EXPECT_TRUE(
      stream.snapshot().at("past_key").same_as(kept.snapshot().at("past_key")));

  // A snapshot shares the cache, so the next step must copy, and the
  // snapshot keeps the state it was taken at.
  auto saved = stream.snapshot();
  Tensor before = saved.at("past_key").clone();
  ASSERT_TRUE(stream.run(cache_feeds(q, k, v, 2, 3)).is_ok());
  EXPECT_NE(held_key_data(stream), cache);
  EXPECT_TRUE(saved.at("past_key").same_as(before));
}

TEST(Stream, BadFeedsLeaveTheStateAlone) {
  auto session = Session::create(fixed_cache_graph());
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  // Three tokens: a prompt of two, then the third as the (bad) step.
  Tensor x = random_uniform_f32({1, kHeads, 3, kDim}, 10);
  Stream stream(**session);
  ASSERT_TRUE(stream.run(cache_feeds(x, x, x, 0, 2)).is_ok());
  auto saved = stream.snapshot();
  auto feeds = cache_feeds(x, x, x, 2, 3);
  feeds["k"] = random_uniform_f32({1, kHeads, 1, kDim + 1}, 11);
  auto bad = stream.run(feeds);
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("'k'"), std::string::npos)
      << bad.status().message();
  auto kept = stream.snapshot();
  ASSERT_EQ(kept.size(), saved.size());
  EXPECT_TRUE(kept.at("past_key").same_as(saved.at("past_key")));

  // A failure inside the run (write index past the capacity) leaves the
  // state too, as it was before the step.
  feeds = cache_feeds(x, x, x, 2, 3);
  feeds["write_index"] = Tensor::from_vector<int64_t>({1}, {kCapacity});
  auto failed = stream.run(feeds);
  ASSERT_FALSE(failed.is_ok());
  EXPECT_EQ(failed.status().message().find("state is reset"), std::string::npos)
      << failed.status().message();
  EXPECT_TRUE(stream.snapshot().at("past_key").same_as(saved.at("past_key")));

  // Updating the state in place, such a failure resets the Stream.
  stream.set_update_state_in_place(true);
  failed = stream.run(feeds);
  ASSERT_FALSE(failed.is_ok());
  EXPECT_NE(failed.status().message().find("state is reset"), std::string::npos)
      << failed.status().message();
  EXPECT_TRUE(stream.snapshot().empty());
}

std::map<std::string, Tensor> qkv_feeds(const Tensor& q, const Tensor& k,
                                        const Tensor& v, int64_t begin,
                                        int64_t end) {
  return {{"q", tokens(q, begin, end)},
          {"k", tokens(k, begin, end)},
          {"v", tokens(v, begin, end)}};
}

TEST(Stream, FixedCapacityKvCacheReadsTheCachedLength) {
  SessionOptions options;
  options.kv_cache_capacity = 8;
  auto session = Session::create(attention_graph(true), options);
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  Tensor q = random_uniform_f32({1, kHeads, 4, kDim}, 7);
  Stream stream(**session);
  for (int64_t t : {0, 3}) {
    auto out = stream.run(qkv_feeds(q, q, q, t, t == 0 ? 3 : 4));
    ASSERT_TRUE(out.is_ok()) << out.status().to_string();
    // The shape read counts the cached tokens, not the capacity.
    EXPECT_EQ(out->at("cached").element_i64(0), t);
  }
  auto state = stream.snapshot();
  ASSERT_EQ(state.size(), 2u);
  EXPECT_EQ(state.at("past_key").dims(),
            (std::vector<int64_t>{1, kHeads, 4, kDim}));
  expect_tokens_close(state.at("past_value"), q, 0);
  // A state fed with a step replaces the held one, in the graph's form.
  std::map<std::string, Tensor> feeds = qkv_feeds(q, q, q, 2, 3);
  feeds["past_key"] = tokens(q, 0, 2);
  feeds["past_value"] = tokens(q, 0, 2);
  auto fed = stream.run(feeds);
  ASSERT_TRUE(fed.is_ok()) << fed.status().to_string();
  EXPECT_EQ(fed->at("cached").element_i64(0), 2);
  expect_tokens_close(stream.snapshot().at("past_key"), q, 0);
  // Empty caches restore to an empty stream.
  Tensor empty = Tensor::allocate(DType::kF32, {1, kHeads, 0, kDim}).value();
  ASSERT_TRUE(
      stream.restore({{"past_key", empty}, {"past_value", empty}}).is_ok());
  auto again = stream.run(qkv_feeds(q, q, q, 0, 1));
  ASSERT_TRUE(again.is_ok()) << again.status().to_string();
  EXPECT_EQ(again->at("cached").element_i64(0), 0);
}

TEST(Stream, FixedCapacityKvCacheRefusesAStepPastItsCapacity) {
  SessionOptions options;
  options.kv_cache_capacity = 4;
  auto capped = Session::create(attention_graph(), options);
  auto growing = Session::create(attention_graph());
  ASSERT_TRUE(capped.is_ok()) << capped.status().to_string();
  ASSERT_TRUE(growing.is_ok()) << growing.status().to_string();
  Tensor q = random_uniform_f32({1, kHeads, 4, kDim}, 8);
  Stream stream(**capped), reference(**growing);
  ASSERT_TRUE(stream.run(qkv_feeds(q, q, q, 0, 3)).is_ok());
  ASSERT_TRUE(reference.run(qkv_feeds(q, q, q, 0, 3)).is_ok());
  auto full = stream.run(qkv_feeds(q, q, q, 2, 4));
  ASSERT_FALSE(full.is_ok());
  EXPECT_NE(full.status().message().find("the KV cache is full: it holds 4"),
            std::string::npos)
      << full.status().message();
  // The refused step changed nothing: the last token still fits.
  auto last = stream.run(qkv_feeds(q, q, q, 3, 4));
  auto want = reference.run(qkv_feeds(q, q, q, 3, 4));
  ASSERT_TRUE(last.is_ok()) << last.status().to_string();
  ASSERT_TRUE(want.is_ok()) << want.status().to_string();
  expect_tokens_close(last->at("y"), want->at("y"), 0);
}

TEST(Stream, FixedCapacityKvCacheNeedsAKvCache) {
  SessionOptions options;
  options.kv_cache_capacity = 16;
  auto session = Session::create(retention_graph(), options);
  ASSERT_FALSE(session.is_ok());
  EXPECT_EQ(session.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(session.status().message().find("has no KV cache"),
            std::string::npos)
      << session.status().message();
}

TEST(Stream, RestoreRefusesUnknownNames) {
  auto session = Session::create(retention_graph());
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  Stream stream(**session);
  Status status = stream.restore({{"q", random_uniform_f32({1}, 0)}});
  EXPECT_FALSE(status.is_ok());
  EXPECT_NE(status.message().find("'q' is not a state input"),
            std::string::npos);
}

TEST(Stream, RestoreRefusesAStateOfTheWrongType) {
  auto session = Session::create(retention_graph());
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  Stream stream(**session);
  Status status = stream.restore(
      {{"past_state", random_uniform_f32({1, kHeads, kDim, kDim + 1}, 0)}});
  EXPECT_FALSE(status.is_ok());
  EXPECT_NE(status.message().find("state 'past_state' must be f32 ("),
            std::string::npos)
      << status.message();
  EXPECT_TRUE(stream.snapshot().empty());
  EXPECT_TRUE(stream
                  .restore({{"past_state",
                             random_uniform_f32({1, kHeads, kDim, kDim}, 0)}})
                  .is_ok());
}

INSTANTIATE_TEST_SUITE_P(EveryBackend, StreamTest,
                         ::testing::ValuesIn(compiled_backends()));

}  // namespace
}  // namespace seqrt
