// Damaged files: truncations, bit flips and random overwrites must each
// end in a valid graph or a clean error, never a crash or an out-of-bounds
// read (this test also runs under AddressSanitizer).
#include <gtest/gtest.h>

#include <random>

#include "importers/native/format.h"
#include "importers/native/test_models.h"
#include "importers/native/writer.h"

namespace seqrt {
namespace {

using testing_models::every_feature_graph;
using testing_models::read_test_image;
using testing_models::weights_graph;

std::vector<uint8_t> image_of(const Graph& graph) {
  return write_seqrt_buffer(graph).value();
}

// Bytes of the header and FlatBuffer, where damage changes the structure
// (the rest are tensor bytes).
size_t structure_size(const std::vector<uint8_t>& bytes) {
  SeqrtHeader header = decode_seqrt_header(bytes.data());
  return static_cast<size_t>(header.flatbuffer_offset + header.flatbuffer_size);
}

// Reads every tensor byte of `graph`, so ASan sees any view that points
// outside the image.
uint64_t touch_tensors(const Graph& graph) {
  uint64_t sum = 0;
  auto touch = [&sum](const Tensor& tensor) {
    const auto* bytes = static_cast<const uint8_t*>(tensor.data());
    for (size_t i = 0; i < tensor.byte_size(); ++i) sum += bytes[i];
  };
  for (const auto& [id, tensor] : graph.constants) touch(tensor);
  for (const StatePair& pair : graph.state_pairs) {
    if (pair.initial) touch(*pair.initial);
  }
  for (const Node& node : graph.nodes) {
    for (const auto& [name, attr] : node.attrs) {
      if (attr.type() == AttrType::kTensor) touch(attr.as_tensor());
      if (attr.type() == AttrType::kGraph)
        sum += touch_tensors(*attr.as_graph());
    }
  }
  return sum;
}

// The outcome of reading damaged bytes: a graph, or an error of the kinds
// a bad file may give, naming the input. Counts the graphs in `accepted`.
::testing::AssertionResult reads_cleanly(const std::vector<uint8_t>& bytes,
                                         int* accepted = nullptr) {
  Result<Graph> graph = read_test_image(bytes);
  if (graph.is_ok()) {
    touch_tensors(*graph);
    if (accepted != nullptr) ++*accepted;
    return ::testing::AssertionSuccess();
  }
  StatusCode code = graph.status().code();
  std::string message = graph.status().message();
  if (code != StatusCode::kInvalidModel && code != StatusCode::kUnsupported) {
    return ::testing::AssertionFailure()
           << "unexpected error kind: " << graph.status().to_string();
  }
  if (message.rfind("'<memory buffer>': ", 0) != 0) {
    return ::testing::AssertionFailure()
           << "error does not name the input: " << message;
  }
  return ::testing::AssertionSuccess();
}

TEST(NativeCorruption, TruncationAtEveryByte) {
  std::vector<uint8_t> bytes = image_of(every_feature_graph());
  for (size_t size = 0; size < bytes.size(); ++size) {
    std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + size);
    Result<Graph> graph = read_test_image(cut);
    // The header says how long the file is: every cut is detected.
    ASSERT_FALSE(graph.is_ok()) << "cut at " << size;
    ASSERT_EQ(graph.status().code(), StatusCode::kInvalidModel)
        << "cut at " << size << ": " << graph.status().to_string();
  }
}

TEST(NativeCorruption, TruncationAtSampledPointsOfALargerModel) {
  std::vector<uint8_t> bytes = image_of(weights_graph(1 << 18));  // 1 MiB
  std::mt19937_64 random(42);
  for (int i = 0; i < 200; ++i) {
    size_t size = random() % bytes.size();
    std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + size);
    Result<Graph> graph = read_test_image(cut);
    ASSERT_FALSE(graph.is_ok()) << "cut at " << size;
    ASSERT_EQ(graph.status().code(), StatusCode::kInvalidModel);
  }
}

// Every bit of a small model's header and FlatBuffer, one at a time.
TEST(NativeCorruption, EverySingleBitFlipInASmallModel) {
  std::vector<uint8_t> bytes = image_of(weights_graph(16));
  size_t end = structure_size(bytes);
  int accepted = 0;
  for (size_t byte = 0; byte < end; ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      bytes[byte] ^= static_cast<uint8_t>(1u << bit);
      ASSERT_TRUE(reads_cleanly(bytes, &accepted))
          << "bit " << bit << " of byte " << byte;
      bytes[byte] ^= static_cast<uint8_t>(1u << bit);
    }
  }
  // Some flips (in names, padding) still give a valid graph; most are
  // caught. Both kinds must occur or the test exercises too little.
  EXPECT_GT(accepted, 0);
  EXPECT_LT(accepted, static_cast<int>(end * 8));
}

// Sampled bits of the structure of the model that uses every feature.
TEST(NativeCorruption, SampledBitFlipsInTheFullModel) {
  std::vector<uint8_t> bytes = image_of(every_feature_graph());
  size_t end = structure_size(bytes);
  std::mt19937_64 random(2024);
  int accepted = 0;
  for (int trial = 0; trial < 4000; ++trial) {
    size_t byte = random() % end;
    auto mask = static_cast<uint8_t>(1u << (random() % 8));
    bytes[byte] ^= mask;
    ASSERT_TRUE(reads_cleanly(bytes, &accepted))
        << "mask " << int{mask} << " at byte " << byte;
    bytes[byte] ^= mask;
  }
  EXPECT_GT(accepted, 0);
  EXPECT_LT(accepted, 4000);
}

TEST(NativeCorruption, BitFlipsInTensorBytesOnlyChangeValues) {
  Graph graph = every_feature_graph();
  std::vector<uint8_t> bytes = image_of(graph);
  size_t start =
      static_cast<size_t>(decode_seqrt_header(bytes.data()).segments_offset);
  std::mt19937_64 random(7);
  for (int i = 0; i < 200; ++i) {
    size_t byte = start + random() % (bytes.size() - start);
    bytes[byte] ^= static_cast<uint8_t>(1u << (random() % 8));
    Result<Graph> back = read_test_image(bytes);
    ASSERT_TRUE(back.is_ok()) << back.status().to_string();
    EXPECT_EQ(back->values.size(), graph.values.size());
  }
}

TEST(NativeCorruption, RandomByteOverwrites) {
  std::vector<uint8_t> original = image_of(every_feature_graph());
  size_t end = structure_size(original);
  std::mt19937_64 random(1234);
  for (int trial = 0; trial < 3000; ++trial) {
    std::vector<uint8_t> bytes = original;
    int count = 1 + static_cast<int>(random() % 8);
    for (int i = 0; i < count; ++i) {
      // Mostly the structure, sometimes anywhere.
      size_t limit = (random() % 4 == 0) ? bytes.size() : end;
      bytes[random() % limit] = static_cast<uint8_t>(random());
    }
    ASSERT_TRUE(reads_cleanly(bytes)) << "trial " << trial;
  }
}

TEST(NativeCorruption, RandomOverwritesWithExtremeValues) {
  // Offsets and sizes are 32- and 64-bit: overwrite aligned words with
  // values near the limits where overflow bugs live.
  std::vector<uint8_t> original = image_of(every_feature_graph());
  size_t end = structure_size(original);
  const uint32_t extremes[] = {0u,          1u,          0x7fffffffu,
                               0x80000000u, 0xfffffffcu, 0xffffffffu};
  std::mt19937_64 random(99);
  for (int trial = 0; trial < 3000; ++trial) {
    std::vector<uint8_t> bytes = original;
    size_t at = (random() % (end / 4)) * 4;
    uint32_t word = extremes[random() % 6];
    for (int i = 0; i < 4; ++i)
      bytes[at + i] = static_cast<uint8_t>(word >> (8 * i));
    ASSERT_TRUE(reads_cleanly(bytes)) << "trial " << trial << " at " << at;
  }
}

}  // namespace
}  // namespace seqrt
