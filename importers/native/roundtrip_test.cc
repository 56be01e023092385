// Graph -> .seqrt -> graph round trips, zero-copy views, versions and the
// checks the public reader runs.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <utility>

#include "graph/builder.h"
#include "importers/native/format.h"
#include "importers/native/read_options.h"
#include "importers/native/reader.h"
#include "importers/native/test_models.h"
#include "importers/native/writer.h"

namespace seqrt {
namespace {

using testing_models::AlignedImage;
using testing_models::every_feature_graph;
using testing_models::read_test_image;
using testing_models::temp_path;
using testing_models::test_read_options;
using testing_models::weights_graph;

std::vector<uint8_t> write_or_die(const Graph& graph) {
  Result<std::vector<uint8_t>> bytes = write_seqrt_buffer(graph);
  EXPECT_TRUE(bytes.is_ok()) << bytes.status().to_string();
  return bytes.is_ok() ? std::move(bytes).value() : std::vector<uint8_t>();
}

// Every tensor of `graph` and its subgraphs.
void collect_tensors(const Graph& graph, std::vector<Tensor>& out) {
  for (const auto& [id, tensor] : graph.constants) out.push_back(tensor);
  for (const StatePair& pair : graph.state_pairs) {
    if (pair.initial) out.push_back(*pair.initial);
  }
  for (const Node& node : graph.nodes) {
    for (const auto& [name, attr] : node.attrs) {
      if (attr.type() == AttrType::kTensor) out.push_back(attr.as_tensor());
      if (attr.type() == AttrType::kGraph)
        collect_tensors(*attr.as_graph(), out);
    }
  }
}

TEST(NativeRoundTrip, EveryFeatureThroughABuffer) {
  Graph graph = every_feature_graph();
  Result<Graph> back = read_test_image(write_or_die(graph));
  ASSERT_TRUE(back.is_ok()) << back.status().to_string();
  EXPECT_TRUE(graphs_equal(graph, *back));
}

TEST(NativeRoundTrip, EveryFeatureThroughAFileAsViews) {
  Graph graph = every_feature_graph();
  std::string path = temp_path("every_feature.seqrt");
  ASSERT_TRUE(write_seqrt_file(graph, path).is_ok());
  Result<Graph> back = read_seqrt_file(path, test_read_options());
  ASSERT_TRUE(back.is_ok()) << back.status().to_string();
  // The mapping outlives the directory entry: tensors stay readable.
  ASSERT_EQ(::unlink(path.c_str()), 0);
  EXPECT_TRUE(graphs_equal(graph, *back));
  std::vector<Tensor> tensors;
  collect_tensors(*back, tensors);
  // 10 constants, 1 in the body, 1 tensor attribute, 1 initial state.
  EXPECT_EQ(tensors.size(), 13u);
  for (const Tensor& tensor : tensors) {
    EXPECT_TRUE(tensor.is_view());
    EXPECT_EQ(reinterpret_cast<uintptr_t>(tensor.data()) % 64, 0u);
  }
}

TEST(NativeRoundTrip, ReadingAnAlignedBufferDoesNotCopy) {
  AlignedImage image(write_or_die(weights_graph(1000)));
  Result<Graph> back = read_seqrt_buffer(image.owner(), image.data(),
                                         image.size(), test_read_options());
  ASSERT_TRUE(back.is_ok()) << back.status().to_string();
  const Tensor& w = back->constants.begin()->second;
  const auto* data = static_cast<const uint8_t*>(w.data());
  EXPECT_TRUE(w.is_view());
  EXPECT_GE(data, image.data());
  EXPECT_LE(data + w.byte_size(), image.data() + image.size());
}

TEST(NativeRoundTrip, ReadingAMisalignedBufferCopiesOnce) {
  std::vector<uint8_t> bytes = write_or_die(weights_graph(100));
  std::vector<uint8_t> shifted(bytes.size() + 1);
  std::memcpy(shifted.data() + 1, bytes.data(), bytes.size());
  Result<Graph> back = read_seqrt_buffer(nullptr, shifted.data() + 1,
                                         bytes.size(), test_read_options());
  ASSERT_TRUE(back.is_ok()) << back.status().to_string();
  EXPECT_TRUE(graphs_equal(weights_graph(100), *back));
  const Tensor& w = back->constants.begin()->second;
  EXPECT_EQ(reinterpret_cast<uintptr_t>(w.data()) % 64, 0u);
}

TEST(NativeRoundTrip, EmptyGraph) {
  Graph graph;
  Result<Graph> back = read_test_image(write_or_die(graph));
  ASSERT_TRUE(back.is_ok()) << back.status().to_string();
  EXPECT_TRUE(graphs_equal(graph, *back));
}

TEST(NativeRoundTrip, TensorsSharingStorageAreWrittenOnce) {
  Graph one = weights_graph(4096);
  Graph two = one;
  Tensor w = two.constants.begin()->second;
  two.constants.emplace(two.add_value(Value{"w_tied", w.dtype(), w.shape()}),
                        w);
  std::vector<uint8_t> one_bytes = write_or_die(one);
  std::vector<uint8_t> two_bytes = write_or_die(two);
  EXPECT_LT(two_bytes.size(), one_bytes.size() + 1024);
  Result<Graph> back = read_test_image(two_bytes);
  ASSERT_TRUE(back.is_ok()) << back.status().to_string();
  EXPECT_TRUE(graphs_equal(two, *back));
  EXPECT_EQ(back->constants.at(1).data(), back->constants.at(3).data());
}

TEST(NativeRoundTrip, ZeroRunsBecomeHolesAndReadBackAsZeros) {
  GraphBuilder b("zeros");
  b.constant("z", Tensor::allocate(DType::kF32, {1 << 20}).value());
  Graph graph = std::move(b).build().value();
  std::string path = temp_path("zeros.seqrt");
  ASSERT_TRUE(write_seqrt_file(graph, path).is_ok());
  Result<Graph> back = read_seqrt_file(path, test_read_options());
  ::unlink(path.c_str());
  ASSERT_TRUE(back.is_ok()) << back.status().to_string();
  EXPECT_TRUE(graphs_equal(graph, *back));
}

// DequantizeLinear(w, 0.5) -> "y", and `constants` as outputs of their own.
Graph dequantize_graph(
    const Tensor& w,
    const std::vector<std::pair<std::string, Tensor>>& constants) {
  GraphBuilder b("quantized");
  ValueId weight = b.constant("w", w);
  ValueId scale = b.constant("scale", Tensor::scalar<float>(0.5f));
  b.output(b.add("DequantizeLinear", {weight, scale}), "y");
  for (const auto& [name, tensor] : constants) {
    b.output(b.constant(name, tensor), name);
  }
  return std::move(b).build().value();
}

// Written, then read back by the public reader (which type-checks the graph
// with the standard ops); the tensors of what it read.
std::vector<Tensor> public_round_trip(const Graph& graph) {
  AlignedImage image(write_or_die(graph));
  Result<Graph> back =
      read_seqrt_buffer(image.owner(), image.data(), image.size());
  std::vector<Tensor> tensors;
  EXPECT_TRUE(back.is_ok()) << back.status().to_string();
  if (!back.is_ok()) return tensors;
  EXPECT_TRUE(graphs_equal(graph, *back));
  collect_tensors(*back, tensors);
  return tensors;
}

TEST(NativeRoundTrip, PackedInt4AndFloat8Tensors) {
  // An odd count: the last byte holds one nibble.
  Tensor i4 = Tensor::allocate(DType::kI4, {5}).value();
  for (int64_t i = 0; i < 5; ++i) i4.set_element_i64(i, i - 3);
  Tensor u4 = Tensor::allocate(DType::kU4, {2, 2}).value();
  for (int64_t i = 0; i < 4; ++i) u4.set_element_i64(i, 15 - i);
  Tensor f8 = Tensor::allocate(DType::kF8E5M2, {3}).value();
  for (int64_t i = 0; i < 3; ++i) f8.set_element_f64(i, 0.5 * (i + 1));
  bool saw_i4 = false;
  for (const Tensor& t :
       public_round_trip(dequantize_graph(i4, {{"u", u4}, {"f", f8}}))) {
    if (t.dtype() != DType::kI4) continue;
    saw_i4 = true;
    EXPECT_EQ(t.byte_size(), 3u);
    EXPECT_EQ(t.element_i64(0), -3);
    EXPECT_EQ(t.element_i64(4), 1);
  }
  EXPECT_TRUE(saw_i4);
}

TEST(NativeRoundTrip, Float4E2M1AndFloat8E8M0Tensors) {  // format 1.2
  // An odd count of f4e2m1: the last byte holds one nibble.
  Tensor f4 = Tensor::allocate(DType::kF4E2M1, {5}).value();
  const double values[] = {-6.0, 0.5, 1.5, -0.0, 3.0};
  for (int64_t i = 0; i < 5; ++i) f4.set_element_f64(i, values[i]);
  Tensor e8m0 = Tensor::allocate(DType::kF8E8M0, {3}).value();
  for (int64_t i = 0; i < 3; ++i) e8m0.set_element_f64(i, std::ldexp(1.0, i));
  int seen = 0;
  for (const Tensor& t :
       public_round_trip(dequantize_graph(f4, {{"e", e8m0}}))) {
    if (t.dtype() == DType::kF4E2M1) {
      ++seen;
      EXPECT_EQ(t.byte_size(), 3u);
      for (int64_t i = 0; i < 5; ++i) EXPECT_EQ(t.element_f64(i), values[i]);
    } else if (t.dtype() == DType::kF8E8M0) {
      ++seen;
      EXPECT_EQ(t.byte_size(), 3u);
      EXPECT_EQ(t.element_f64(2), 4.0);
    }
  }
  EXPECT_EQ(seen, 2);
}

TEST(NativeWriter, RefusesAGraphThatFailsVerification) {
  Graph graph = weights_graph(4);
  graph.nodes[0].inputs.push_back(99);
  Status status = write_seqrt_file(graph, temp_path("bad.seqrt"));
  EXPECT_EQ(status.code(), StatusCode::kInvalidModel);
  EXPECT_NE(status.message().find("bad.seqrt"), std::string::npos);
  EXPECT_NE(status.message().find("#99"), std::string::npos);
  EXPECT_NE(::access(temp_path("bad.seqrt").c_str(), F_OK), 0);
}

TEST(NativeWriter, RefusesATensorWithoutDtype) {
  Graph graph = weights_graph(4);
  graph.nodes[0].attrs["tensor"] = Tensor();
  Result<std::vector<uint8_t>> bytes = write_seqrt_buffer(graph);
  ASSERT_FALSE(bytes.is_ok());
  EXPECT_EQ(bytes.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bytes.status().message().find("attribute 'tensor' has no dtype"),
            std::string::npos)
      << bytes.status().message();
}

TEST(NativeWriter, ReportsAnUnwritablePath) {
  Status status =
      write_seqrt_file(weights_graph(4), "/nonexistent/dir/m.seqrt");
  EXPECT_EQ(status.code(), StatusCode::kIoError);
  EXPECT_NE(status.message().find("/nonexistent/dir/m.seqrt"),
            std::string::npos);
}

std::vector<uint8_t> with_version(std::vector<uint8_t> bytes, uint16_t major,
                                  uint16_t minor) {
  SeqrtHeader header = decode_seqrt_header(bytes.data());
  header.major = major;
  header.minor = minor;
  encode_seqrt_header(header, bytes.data());
  return bytes;
}

TEST(NativeVersion, WritesTheCurrentVersion) {
  std::vector<uint8_t> bytes = write_or_die(weights_graph(4));
  SeqrtHeader header = decode_seqrt_header(bytes.data());
  EXPECT_EQ(header.major, kSeqrtFormatMajor);
  EXPECT_EQ(header.minor, kSeqrtFormatMinor);
}

TEST(NativeVersion, AcceptsANewerMinorVersion) {
  std::vector<uint8_t> bytes = with_version(
      write_or_die(weights_graph(4)), kSeqrtFormatMajor, kSeqrtFormatMinor + 3);
  Result<Graph> back = read_test_image(bytes);
  ASSERT_TRUE(back.is_ok()) << back.status().to_string();
  EXPECT_TRUE(graphs_equal(weights_graph(4), *back));
}

TEST(NativeVersion, ReadsEveryOlderMinorVersion) {
  for (uint16_t minor = 0; minor < kSeqrtFormatMinor; ++minor) {
    std::vector<uint8_t> bytes =
        with_version(write_or_die(weights_graph(4)), kSeqrtFormatMajor, minor);
    Result<Graph> back = read_test_image(bytes);
    ASSERT_TRUE(back.is_ok()) << minor << ": " << back.status().to_string();
    EXPECT_TRUE(graphs_equal(weights_graph(4), *back));
  }
}

TEST(NativeVersion, RefusesAnotherMajorVersionNamingBoth) {
  for (uint16_t major : {uint16_t{0}, uint16_t{kSeqrtFormatMajor + 1}}) {
    std::vector<uint8_t> bytes =
        with_version(write_or_die(weights_graph(4)), major, 2);
    Result<Graph> back = read_test_image(bytes);
    ASSERT_FALSE(back.is_ok());
    EXPECT_EQ(back.status().code(), StatusCode::kInvalidModel);
    std::string message = back.status().message();
    EXPECT_NE(message.find(std::to_string(major) + ".2"), std::string::npos)
        << message;
    EXPECT_NE(message.find(std::to_string(kSeqrtFormatMajor) + ".x"),
              std::string::npos)
        << message;
  }
}

TEST(NativeMagic, LooksLikeSeqrt) {
  std::vector<uint8_t> bytes = write_or_die(weights_graph(4));
  EXPECT_TRUE(looks_like_seqrt(bytes.data(), bytes.size()));
  EXPECT_FALSE(looks_like_seqrt(bytes.data(), 7));
  EXPECT_FALSE(looks_like_seqrt(nullptr, 0));
  const uint8_t onnx_start[] = {0x08, 0x07, 0x12, 0x07, 'p', 'y', 't', 'o'};
  EXPECT_FALSE(looks_like_seqrt(onnx_start, sizeof(onnx_start)));
}

TEST(NativeReader, PublicReaderRefusesUnknownOps) {
  // seqrt_test::AllAttrs is only in the tests' own registry.
  std::vector<uint8_t> bytes = write_or_die(weights_graph(4));
  AlignedImage image(bytes);
  Result<Graph> back =
      read_seqrt_buffer(image.owner(), image.data(), image.size());
  ASSERT_FALSE(back.is_ok());
  EXPECT_EQ(back.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(back.status().message().find("'<memory buffer>'"),
            std::string::npos);
  EXPECT_NE(back.status().message().find("AllAttrs"), std::string::npos);
}

TEST(NativeReader, ChecksAttributeTypesAgainstTheSchema) {
  Graph graph = weights_graph(4);
  graph.nodes[0].attrs["int"] = Attribute(1.5f);
  Result<Graph> back = read_test_image(write_or_die(graph));
  ASSERT_FALSE(back.is_ok());
  EXPECT_EQ(back.status().code(), StatusCode::kInvalidModel);
  EXPECT_NE(back.status().message().find("attribute 'int' must be int, got "
                                         "float"),
            std::string::npos)
      << back.status().message();
}

TEST(NativeReader, MissingFileIsNotFound) {
  Result<Graph> back = read_seqrt_file(temp_path("missing.seqrt"));
  ASSERT_FALSE(back.is_ok());
  EXPECT_EQ(back.status().code(), StatusCode::kNotFound);
  EXPECT_NE(back.status().message().find("missing.seqrt"), std::string::npos);
}

TEST(NativeReader, EmptyFileIsInvalid) {
  std::string path = temp_path("empty.seqrt");
  FILE* file = std::fopen(path.c_str(), "wb");
  ASSERT_NE(file, nullptr);
  std::fclose(file);
  Result<Graph> back = read_seqrt_file(path);
  ::unlink(path.c_str());
  ASSERT_FALSE(back.is_ok());
  EXPECT_EQ(back.status().code(), StatusCode::kInvalidModel);
  EXPECT_NE(back.status().message().find("empty.seqrt"), std::string::npos);
}

// Standard ops with their ONNX attributes go through the public reader
// (the global registry).
TEST(NativeReader, PublicReaderAcceptsStandardOps) {
  GraphBuilder b("mlp");
  ValueId tokens = b.input("tokens", DType::kI64, Shape{Dim::symbol("seq")});
  ValueId table = b.constant(
      "embed",
      Tensor::from_vector<float>({3, 4}, std::vector<float>(12, 0.5f)));
  ValueId x = b.add("Gather", {table, tokens}, {{"axis", int64_t{0}}});
  ValueId w = b.constant(
      "w", Tensor::from_vector<float>({4, 4}, std::vector<float>(16, 0.25f)));
  ValueId bias = b.constant("b", Tensor::from_vector<float>({4}, {1, 2, 3, 4}));
  ValueId h = b.add("Relu", {b.add("Add", {b.add("MatMul", {x, w}), bias})});
  ValueId scale =
      b.constant("scale", Tensor::from_vector<float>({4}, {1, 1, 1, 1}));
  ValueId n = b.add("LayerNormalization", {h, scale},
                    {{"axis", int64_t{-1}}, {"epsilon", 1e-5f}});
  ValueId shape =
      b.constant("shape", Tensor::from_vector<int64_t>({2}, {-1, 2}));
  b.output(b.add("Reshape", {n, shape}), "y");
  Graph graph = std::move(b).build().value();
  AlignedImage image(write_or_die(graph));
  Result<Graph> back =
      read_seqrt_buffer(image.owner(), image.data(), image.size());
  ASSERT_TRUE(back.is_ok()) << back.status().to_string();
  EXPECT_TRUE(graphs_equal(graph, *back));
}

}  // namespace
}  // namespace seqrt
