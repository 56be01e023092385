// Hand-made malformed files: each must give a clean kInvalidModel error
// that names the input and says what is wrong.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>

#include "graph/dtype.h"
#include "graph/verifier.h"
#include "importers/native/format.h"
#include "importers/native/test_models.h"
#include "importers/native/writer.h"
#include "schema/seqrt_generated.h"

namespace seqrt {
namespace {

using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;
using testing_models::read_test_image;

// A file image from a finished FlatBuffer and a segment area.
std::vector<uint8_t> assemble(const FlatBufferBuilder& fbb,
                              const std::vector<uint8_t>& area) {
  SeqrtHeader header;
  header.major = 1;
  header.header_size = kSeqrtHeaderSize;
  header.flatbuffer_offset = kSeqrtHeaderSize;
  header.flatbuffer_size = fbb.GetSize();
  header.segments_offset = align_to_segment(kSeqrtHeaderSize + fbb.GetSize());
  header.segments_size = area.size();
  std::vector<uint8_t> bytes(header.segments_offset + area.size());
  encode_seqrt_header(header, bytes.data());
  std::memcpy(bytes.data() + kSeqrtHeaderSize, fbb.GetBufferPointer(),
              fbb.GetSize());
  if (!area.empty()) {
    std::memcpy(bytes.data() + header.segments_offset, area.data(),
                area.size());
  }
  return bytes;
}

// Finishes a model of one graph and one segment of `segment_size` bytes.
std::vector<uint8_t> finish(FlatBufferBuilder& fbb, Offset<fb::Graph> graph,
                            uint64_t segment_size = 0) {
  std::vector<fb::Segment> segments = {fb::Segment(0, segment_size)};
  fb::FinishModelBuffer(fbb, fb::CreateModelDirect(fbb, graph, &segments));
  return assemble(fbb, std::vector<uint8_t>(segment_size, 0));
}

Offset<fb::Value> f32_value(FlatBufferBuilder& fbb, const char* name,
                            std::vector<fb::Dim> dims = {}) {
  return fb::CreateValueDirect(fbb, name, fb::DType::F32, &dims);
}

struct TensorRef {
  fb::DType dtype = fb::DType::F32;
  std::vector<int64_t> dims = {32, 32};
  uint32_t segment = 0;
  uint64_t offset = 0;
  uint64_t size = 4096;
};

// Graph "g" with value "w" (f32 (32,32)) as a constant described by `ref`.
std::vector<uint8_t> constant_model(const TensorRef& ref,
                                    uint64_t segment_size) {
  FlatBufferBuilder fbb;
  std::vector<Offset<fb::Value>> values = {
      f32_value(fbb, "w", {{32, -1}, {32, -1}})};
  auto tensor = fb::CreateTensorDirect(fbb, ref.dtype, &ref.dims, ref.segment,
                                       ref.offset, ref.size);
  std::vector<Offset<fb::Constant>> constants = {
      fb::CreateConstant(fbb, 0, tensor)};
  auto graph = fb::CreateGraphDirect(fbb, "g", &values, nullptr, nullptr,
                                     nullptr, nullptr, &constants);
  return finish(fbb, graph, segment_size);
}

// Graph "g": input "x" (f32) and one AllAttrs node reading `inputs` and
// writing value "y", with `attrs`; the graph outputs `outputs`.
std::vector<uint8_t> node_model(FlatBufferBuilder& fbb,
                                std::vector<int32_t> inputs,
                                std::vector<Offset<fb::Attribute>> attrs = {},
                                std::vector<int32_t> outputs = {1}) {
  std::vector<Offset<fb::Value>> values = {f32_value(fbb, "x"),
                                           f32_value(fbb, "y")};
  std::vector<int32_t> node_outputs = {1};
  std::vector<Offset<fb::Node>> nodes = {fb::CreateNodeDirect(
      fbb, "n", "AllAttrs", "seqrt_test", &inputs, &node_outputs, &attrs)};
  std::vector<int32_t> graph_inputs = {0};
  auto graph =
      fb::CreateGraphDirect(fbb, "g", &values, &nodes, &graph_inputs, &outputs);
  return finish(fbb, graph);
}

// Expects a kInvalidModel error whose message holds `expected`.
void expect_invalid(const std::vector<uint8_t>& bytes,
                    const std::string& expected) {
  Result<Graph> graph = read_test_image(bytes);
  ASSERT_FALSE(graph.is_ok()) << "expected an error containing: " << expected;
  EXPECT_EQ(graph.status().code(), StatusCode::kInvalidModel)
      << graph.status().to_string();
  std::string message = graph.status().message();
  EXPECT_EQ(message.rfind("'<memory buffer>': ", 0), 0u) << message;
  EXPECT_NE(message.find(expected), std::string::npos) << message;
}

TEST(NativeMalformed, AWellFormedHandMadeModelReads) {
  Result<Graph> graph = read_test_image(constant_model({}, 4096));
  ASSERT_TRUE(graph.is_ok()) << graph.status().to_string();
  EXPECT_EQ(graph->constants.at(0).dims(), (std::vector<int64_t>{32, 32}));
}

TEST(NativeMalformed, ConstantSizeDisagreesWithItsShape) {
  TensorRef ref;
  ref.size = 1024;
  expect_invalid(constant_model(ref, 4096),
                 "graph 'g': constant 'w' (f32(32,32)) needs 4096 bytes but "
                 "the file gives it 1024");
}

TEST(NativeMalformed, ConstantLargerThanItsSegment) {
  expect_invalid(constant_model({}, 1024),
                 "constant 'w' needs 4096 bytes at offset 0 of segment #0 but "
                 "its segment holds 1024");
}

TEST(NativeMalformed, ConstantOffsetOverflows) {
  TensorRef ref;
  ref.offset = std::numeric_limits<uint64_t>::max() - 63;
  expect_invalid(constant_model(ref, 4096), "but its segment holds 4096");
}

TEST(NativeMalformed, ConstantOffsetNotAligned) {
  TensorRef ref;
  ref.offset = 32;
  expect_invalid(constant_model(ref, 8192),
                 "constant 'w' starts at offset 32 of segment #0, not a "
                 "multiple of 64");
}

TEST(NativeMalformed, ConstantInAMissingSegment) {
  TensorRef ref;
  ref.segment = 5;
  expect_invalid(constant_model(ref, 4096),
                 "constant 'w' refers to segment #5 but the file has 1 "
                 "segments");
}

TEST(NativeMalformed, BadTensorDtypes) {
  for (auto code : {0, static_cast<int>(kLastDType) + 1, 200}) {
    TensorRef ref;
    ref.dtype = static_cast<fb::DType>(code);
    expect_invalid(constant_model(ref, 4096),
                   "constant 'w' has dtype code " + std::to_string(code));
  }
}

TEST(NativeMalformed, NegativeAndOverflowingTensorDims) {
  TensorRef negative;
  negative.dims = {-1, 4};
  expect_invalid(constant_model(negative, 4096),
                 "constant 'w': negative dim in shape (-1,4)");
  TensorRef huge;
  huge.dims = {int64_t{1} << 40, int64_t{1} << 40};
  expect_invalid(constant_model(huge, 4096), "more than 2^48 elements");
}

TEST(NativeMalformed, ConstantOfAValueOutOfRange) {
  FlatBufferBuilder fbb;
  std::vector<int64_t> dims = {2};
  auto tensor = fb::CreateTensorDirect(fbb, fb::DType::F32, &dims, 0, 0, 8);
  std::vector<Offset<fb::Constant>> constants = {
      fb::CreateConstant(fbb, 3, tensor)};
  auto graph = fb::CreateGraphDirect(fbb, "g", nullptr, nullptr, nullptr,
                                     nullptr, nullptr, &constants);
  expect_invalid(finish(fbb, graph, 64),
                 "constant #0 refers to value #3 but the graph has 0 values");
}

TEST(NativeMalformed, SameConstantTwice) {
  FlatBufferBuilder fbb;
  std::vector<Offset<fb::Value>> values = {f32_value(fbb, "w", {{2, -1}})};
  std::vector<int64_t> dims = {2};
  auto tensor = fb::CreateTensorDirect(fbb, fb::DType::F32, &dims, 0, 0, 8);
  std::vector<Offset<fb::Constant>> constants = {
      fb::CreateConstant(fbb, 0, tensor), fb::CreateConstant(fbb, 0, tensor)};
  auto graph = fb::CreateGraphDirect(fbb, "g", &values, nullptr, nullptr,
                                     nullptr, nullptr, &constants);
  expect_invalid(finish(fbb, graph, 64), "constant 'w' is given twice");
}

TEST(NativeMalformed, SegmentOutsideTheSegmentArea) {
  FlatBufferBuilder fbb;
  auto graph = fb::CreateGraphDirect(fbb, "g");
  std::vector<fb::Segment> segments = {fb::Segment(64, uint64_t{1} << 63)};
  fb::FinishModelBuffer(fbb, fb::CreateModelDirect(fbb, graph, &segments));
  expect_invalid(assemble(fbb, std::vector<uint8_t>(128)),
                 "segment #0 needs 9223372036854775808 bytes from offset 64 "
                 "of the segment area, which holds only 128 bytes");
}

TEST(NativeMalformed, SegmentNotAligned) {
  FlatBufferBuilder fbb;
  auto graph = fb::CreateGraphDirect(fbb, "g");
  std::vector<fb::Segment> segments = {fb::Segment(8, 8)};
  fb::FinishModelBuffer(fbb, fb::CreateModelDirect(fbb, graph, &segments));
  expect_invalid(assemble(fbb, std::vector<uint8_t>(128)),
                 "segment #0 starts at offset 8 of the segment area, not a "
                 "multiple of 64");
}

TEST(NativeMalformed, ValueIndicesOutOfRange) {
  {
    FlatBufferBuilder fbb;
    expect_invalid(node_model(fbb, {0, 7}),
                   "[AllAttrs] node 'n' input refers to value #7 but the "
                   "graph has 2 values");
  }
  {
    FlatBufferBuilder fbb;
    expect_invalid(node_model(fbb, {-2}), "refers to value #-2");
  }
  {
    FlatBufferBuilder fbb;
    expect_invalid(node_model(fbb, {0}, {}, {1, 2}),
                   "a graph output refers to value #2");
  }
  {
    FlatBufferBuilder fbb;
    expect_invalid(node_model(fbb, {0}, {}, {-1}),
                   "a graph output refers to value #-1");
  }
}

TEST(NativeMalformed, StatePairOutOfRange) {
  FlatBufferBuilder fbb;
  std::vector<Offset<fb::Value>> values = {f32_value(fbb, "s")};
  std::vector<Offset<fb::StatePair>> pairs = {fb::CreateStatePair(fbb, 0, 9)};
  auto graph = fb::CreateGraphDirect(fbb, "g", &values, nullptr, nullptr,
                                     nullptr, nullptr, nullptr, &pairs);
  expect_invalid(finish(fbb, graph), "state pair #0 refers to value #9");
}

TEST(NativeMalformed, BadValueTypes) {
  {
    FlatBufferBuilder fbb;
    std::vector<Offset<fb::Value>> values = {
        fb::CreateValueDirect(fbb, "v", static_cast<fb::DType>(42))};
    expect_invalid(finish(fbb, fb::CreateGraphDirect(fbb, "g", &values)),
                   "value 'v' has dtype code 42");
  }
  {
    FlatBufferBuilder fbb;
    std::vector<Offset<fb::Value>> values = {f32_value(fbb, "v", {{-7, -1}})};
    expect_invalid(finish(fbb, fb::CreateGraphDirect(fbb, "g", &values)),
                   "value 'v': dim 0 (size -7, symbol #-1) is neither");
  }
  {
    FlatBufferBuilder fbb;
    std::vector<Offset<fb::Value>> values = {
        f32_value(fbb, "v", {{4, -1}, {-1, 3}})};
    expect_invalid(finish(fbb, fb::CreateGraphDirect(fbb, "g", &values)),
                   "dim 1 (size -1, symbol #3) is neither a size >= 0, nor "
                   "one of the graph's 0 symbols");
  }
  {
    FlatBufferBuilder fbb;
    std::vector<fb::Dim> dims = {{4, -1}};
    std::vector<Offset<fb::Value>> values = {
        fb::CreateValueDirect(fbb, "v", fb::DType::F32, &dims, true)};
    expect_invalid(finish(fbb, fb::CreateGraphDirect(fbb, "g", &values)),
                   "value 'v' has an unknown rank but lists 1 dims");
  }
}

TEST(NativeMalformed, UnknownAttributeType) {
  FlatBufferBuilder fbb;
  std::vector<Offset<fb::Attribute>> attrs = {
      fb::CreateAttributeDirect(fbb, "int", static_cast<fb::AttrType>(9), 5)};
  expect_invalid(node_model(fbb, {0}, attrs),
                 "[AllAttrs] node 'n' attribute 'int' has type code 9");
}

TEST(NativeMalformed, AttributeTwice) {
  FlatBufferBuilder fbb;
  std::vector<Offset<fb::Attribute>> attrs = {
      fb::CreateAttributeDirect(fbb, "int", fb::AttrType::Int, 5),
      fb::CreateAttributeDirect(fbb, "int", fb::AttrType::Int, 6)};
  expect_invalid(node_model(fbb, {0}, attrs),
                 "[AllAttrs] node 'n' attribute 'int' appears twice");
}

TEST(NativeMalformed, TensorAndGraphAttributesWithoutTheirPayload) {
  {
    FlatBufferBuilder fbb;
    std::vector<Offset<fb::Attribute>> attrs = {
        fb::CreateAttributeDirect(fbb, "tensor", fb::AttrType::Tensor)};
    expect_invalid(node_model(fbb, {0}, attrs),
                   "attribute 'tensor' has no tensor");
  }
  {
    FlatBufferBuilder fbb;
    std::vector<Offset<fb::Attribute>> attrs = {
        fb::CreateAttributeDirect(fbb, "graph", fb::AttrType::Graph)};
    expect_invalid(node_model(fbb, {0}, attrs),
                   "attribute 'graph' has no graph");
  }
}

TEST(NativeMalformed, DuplicateMetadataKey) {
  FlatBufferBuilder fbb;
  std::vector<Offset<fb::MetadataEntry>> metadata = {
      fb::CreateMetadataEntryDirect(fbb, "k", "1"),
      fb::CreateMetadataEntryDirect(fbb, "k", "2")};
  auto graph =
      fb::CreateGraphDirect(fbb, "g", nullptr, nullptr, nullptr, nullptr,
                            nullptr, nullptr, nullptr, &metadata);
  expect_invalid(finish(fbb, graph), "metadata key 'k' appears twice");
}

TEST(NativeMalformed, ModelWithoutGraph) {
  FlatBufferBuilder fbb;
  fb::FinishModelBuffer(fbb, fb::CreateModelDirect(fbb));
  expect_invalid(assemble(fbb, {}), "the model has no graph");
}

TEST(NativeMalformed, WrongFlatBufferIdentifier) {
  FlatBufferBuilder fbb;
  fbb.Finish(fb::CreateModelDirect(fbb, fb::CreateGraphDirect(fbb, "g")),
             "ONNX");
  expect_invalid(assemble(fbb, {}), "lacks the \"SQRT\" identifier");
}

TEST(NativeMalformed, CycleIsFoundByTheGraphVerifier) {
  FlatBufferBuilder fbb;
  std::vector<Offset<fb::Value>> values = {f32_value(fbb, "a"),
                                           f32_value(fbb, "b")};
  std::vector<int32_t> a = {0}, b = {1};
  std::vector<Offset<fb::Node>> nodes = {
      fb::CreateNodeDirect(fbb, "n0", "AllAttrs", "seqrt_test", &b, &a),
      fb::CreateNodeDirect(fbb, "n1", "AllAttrs", "seqrt_test", &a, &b)};
  auto graph = fb::CreateGraphDirect(fbb, "g", &values, &nodes);
  expect_invalid(finish(fbb, graph), "graph 'g' has a cycle through");
}

// A chain of graphs, each with one node whose "graph" attribute holds the
// next; `levels` subgraphs below the main graph.
Offset<fb::Graph> nested_graph(FlatBufferBuilder& fbb, int levels) {
  std::vector<Offset<fb::Attribute>> attrs;
  if (levels > 0) {
    auto inner = nested_graph(fbb, levels - 1);
    attrs.push_back(fb::CreateAttributeDirect(fbb, "graph", fb::AttrType::Graph,
                                              0, 0.0f, nullptr, nullptr,
                                              nullptr, nullptr, 0, inner));
  }
  std::vector<Offset<fb::Node>> nodes = {fb::CreateNodeDirect(
      fbb, "n", "AllAttrs", "seqrt_test", nullptr, nullptr, &attrs)};
  return fb::CreateGraphDirect(fbb, "level", nullptr, &nodes);
}

TEST(NativeMalformed, SubgraphDepthIsBounded) {
  {
    FlatBufferBuilder fbb;
    Result<Graph> graph =
        read_test_image(finish(fbb, nested_graph(fbb, kMaxSubgraphDepth)));
    EXPECT_TRUE(graph.is_ok()) << graph.status().to_string();
  }
  {
    FlatBufferBuilder fbb;
    expect_invalid(finish(fbb, nested_graph(fbb, kMaxSubgraphDepth + 1)),
                   "subgraphs nest deeper than 64 levels");
  }
  {
    FlatBufferBuilder fbb;
    expect_invalid(finish(fbb, nested_graph(fbb, 200)),
                   "the FlatBuffers verifier rejected it");
  }
}

TEST(NativeMalformed, SharedStringsCannotExplodeMemory) {
  // 200k references to one 1000-byte string: under 1 MB of FlatBuffer that
  // would become 200 MB of strings.
  FlatBufferBuilder fbb;
  auto text = fbb.CreateString(std::string(1000, 'x'));
  std::vector<Offset<flatbuffers::String>> texts(200000, text);
  auto texts_offset = fbb.CreateVector(texts);
  auto name = fbb.CreateString("strings");
  std::vector<Offset<fb::Attribute>> attrs = {fb::CreateAttribute(
      fbb, name, fb::AttrType::Strings, 0, 0.0f, 0, 0, 0, texts_offset)};
  expect_invalid(node_model(fbb, {0}, attrs),
                 "the FlatBuffer expands into more data than it holds");
}

// Header fields patched in a valid image.
class NativeHeader : public ::testing::Test {
 protected:
  std::vector<uint8_t> patched(void (*patch)(SeqrtHeader&)) {
    std::vector<uint8_t> bytes =
        write_seqrt_buffer(testing_models::weights_graph(64)).value();
    SeqrtHeader header = decode_seqrt_header(bytes.data());
    patch(header);
    encode_seqrt_header(header, bytes.data());
    return bytes;
  }
};

TEST_F(NativeHeader, TooSmall) {
  expect_invalid(std::vector<uint8_t>(10, 0),
                 "10 bytes is too small for a .seqrt file");
}

TEST_F(NativeHeader, BadMagic) {
  std::vector<uint8_t> bytes = patched([](SeqrtHeader&) {});
  bytes[5] = '\n';  // a "\r\n" turned into "\n\n" by a text-mode copy
  expect_invalid(bytes, "not a .seqrt file");
}

TEST_F(NativeHeader, HeaderSizeTooSmall) {
  expect_invalid(patched([](SeqrtHeader& h) { h.header_size = 8; }),
                 "the header size is 8, at least 64 expected");
}

TEST_F(NativeHeader, FlatBufferOverlapsHeader) {
  expect_invalid(patched([](SeqrtHeader& h) { h.flatbuffer_offset = 8; }),
                 "the FlatBuffer at offset 8 overlaps the 64-byte header");
}

TEST_F(NativeHeader, FlatBufferMisaligned) {
  expect_invalid(patched([](SeqrtHeader& h) { h.flatbuffer_offset = 68; }),
                 "the FlatBuffer offset 68 is not a multiple of 8");
}

TEST_F(NativeHeader, FlatBufferTooLarge) {
  expect_invalid(
      patched([](SeqrtHeader& h) { h.flatbuffer_size = uint64_t{1} << 31; }),
      "exceeds the FlatBuffers limit");
}

TEST_F(NativeHeader, FlatBufferPastTheEnd) {
  expect_invalid(
      patched([](SeqrtHeader& h) { h.flatbuffer_size = 1 << 20; }),
      "the FlatBuffer needs bytes [64, 1048640) but the file has only");
  expect_invalid(patched([](SeqrtHeader& h) {
                   h.flatbuffer_offset =
                       std::numeric_limits<uint64_t>::max() - 7;
                 }),
                 "truncated?");
}

TEST_F(NativeHeader, SegmentAreaMisplaced) {
  expect_invalid(patched([](SeqrtHeader& h) { h.segments_offset += 8; }),
                 "is not a multiple of 64");
  expect_invalid(patched([](SeqrtHeader& h) { h.segments_offset = 64; }),
                 "overlaps the FlatBuffer");
  expect_invalid(patched([](SeqrtHeader& h) { h.segments_size += 1; }),
                 "truncated?");
  expect_invalid(patched([](SeqrtHeader& h) {
                   h.segments_size = std::numeric_limits<uint64_t>::max();
                 }),
                 "truncated?");
}

}  // namespace
}  // namespace seqrt
