#include "importers/native/test_models.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <limits>

#include "graph/builder.h"
#include "importers/native/format.h"

namespace seqrt {
namespace testing_models {
namespace {

constexpr const char* kTestDomain = "seqrt_test";

NodeOptions test_node(const std::string& name) {
  NodeOptions options;
  options.name = name;
  options.domain = kTestDomain;
  return options;
}

Graph built(GraphBuilder&& builder) {
  Result<Graph> graph = std::move(builder).build();
  EXPECT_TRUE(graph.is_ok()) << graph.status().to_string();
  return graph.is_ok() ? std::move(graph).value() : Graph();
}

Shape batch_seq_8() {
  return Shape{Dim::symbol("batch"), Dim::symbol("seq"), 8};
}

// Depth 2: captures "x" from the main graph, two levels up.
Graph inner_body() {
  GraphBuilder b("inner");
  ValueId x = b.capture("x", DType::kF32, batch_seq_8());
  b.output(b.add("AllAttrs", {x}, {{"int", int64_t{2}}}, test_node("inner")));
  b.set_metadata("level", "2");
  return built(std::move(b));
}

// Depth 1: its own input and constant, a capture, and a nested subgraph.
Graph body() {
  GraphBuilder b("body");
  ValueId x = b.capture("x", DType::kF32, batch_seq_8());
  ValueId h = b.input("h", DType::kF16, Shape{4});
  ValueId w = b.constant("w_body", Tensor::from_vector<int32_t>({2}, {7, -7}));
  AttrMap attrs = {{"graph", std::make_shared<Graph>(inner_body())}};
  std::vector<ValueId> outs =
      b.add_node("AllAttrs", {h, kNoValue, w, x}, attrs, 2, test_node("step"));
  b.output(outs[0]);
  b.output(outs[1], "step_out");
  return built(std::move(b));
}

// One constant of every dtype, plus a scalar and an empty tensor.
std::vector<ValueId> add_constants(GraphBuilder& b) {
  return {
      b.constant("c_f32",
                 Tensor::from_vector<float>(
                     {2, 3}, {0.5f, -1.0f, 2.0f, 3.25f, 1e-3f, -0.0f})),
      b.constant("c_f16", Tensor::from_vector<Half>(
                              {3}, {Half{0x3c00}, Half{0xc000}, Half{0x7bff}})),
      b.constant("c_bf16", Tensor::from_vector<BFloat16>(
                               {2}, {BFloat16{0x3f80}, BFloat16{0xff7f}})),
      b.constant("c_f64",
                 Tensor::from_vector<double>({2}, {3.141592653589793, -1e300})),
      b.constant("c_i8", Tensor::from_vector<int8_t>({4}, {-128, -1, 0, 127})),
      b.constant("c_u8", Tensor::from_vector<uint8_t>({3}, {0, 128, 255})),
      b.constant("c_i32",
                 Tensor::from_vector<int32_t>(
                     {2, 2}, {1, -2, std::numeric_limits<int32_t>::max(),
                              std::numeric_limits<int32_t>::min()})),
      b.constant("c_i64",
                 Tensor::scalar<int64_t>(std::numeric_limits<int64_t>::min())),
      b.constant("c_bool",
                 Tensor::from_vector<bool>({4}, {true, false, true, true})),
      b.constant("c_empty", Tensor::allocate(DType::kF32, {0, 3}).value()),
  };
}

AttrMap every_attribute() {
  return {
      {"int", std::numeric_limits<int64_t>::min()},
      {"float", -0.125f},
      {"string", "gated_delta"},
      {"ints",
       std::vector<int64_t>{0, -1, std::numeric_limits<int64_t>::max()}},
      {"floats", std::vector<float>{1.5f, -2.0f, 1e-30f}},
      {"strings", std::vector<std::string>{"a", "", "long string here"}},
      {"tensor", Tensor::from_vector<int64_t>({2}, {1, -1})},
      {"graph", std::make_shared<Graph>(body())},
  };
}

}  // namespace

const OpRegistry& test_registry() {
  static const OpRegistry* registry = [] {
    auto* built_registry = new OpRegistry();
    OpSchema schema;
    schema.domain = kTestDomain;
    schema.name = "AllAttrs";
    schema.doc = "accepts every attribute type; for the native format tests";
    schema.inputs = {{"inputs", /*optional=*/true, /*variadic=*/true}};
    schema.outputs = {{"outputs", /*optional=*/true, /*variadic=*/true}};
    for (AttrType type :
         {AttrType::kInt, AttrType::kFloat, AttrType::kString, AttrType::kInts,
          AttrType::kFloats, AttrType::kStrings, AttrType::kTensor,
          AttrType::kGraph}) {
      AttrSpec spec;
      spec.name = attr_type_name(type);
      spec.type = type;
      schema.attrs.push_back(spec);
    }
    schema.infer = [](InferContext&) { return Status::ok(); };
    schema.reference = [](KernelContext&) { return Status::ok(); };
    register_or_die(*built_registry, std::move(schema));
    return built_registry;
  }();
  return *registry;
}

SeqrtReadOptions test_read_options() {
  SeqrtReadOptions options;
  options.registry = &test_registry();
  return options;
}

Graph every_feature_graph() {
  GraphBuilder b("every_feature");
  ValueId x = b.input("x", DType::kF32, batch_seq_8());
  ValueId tokens =
      b.input("tokens", DType::kI64, Shape{Dim::symbol("batch"), Dim()});
  ValueId mask = b.input("mask", DType::kBool, Shape{});
  b.graph().value(mask).shape = std::nullopt;
  ValueId past =
      b.input("past_state", DType::kF32, Shape{Dim::symbol("batch"), 4});
  ValueId past_kv =
      b.input("past_kv", DType::kBF16,
              Shape{Dim::symbol("batch"), Dim::symbol("past_seq"), 2});
  std::vector<ValueId> constants = add_constants(b);

  std::vector<ValueId> inputs = {x, tokens, mask, kNoValue};
  inputs.insert(inputs.end(), constants.begin(), constants.end());
  std::vector<ValueId> outs =
      b.add_node("AllAttrs", inputs, every_attribute(), 3, test_node("all"));
  b.graph().nodes.back().outputs[1] = kNoValue;  // an omitted output
  b.output(outs[0], "y");
  b.output(outs[2], "y_unknown_rank");
  b.graph().value(outs[2]).dtype = DType::kI8;

  ValueId present = b.add("AllAttrs", {past}, {}, test_node("state"));
  b.graph().nodes.back().name = "";  // nodes may be unnamed
  b.graph().value(present) =
      Value{"present_state", DType::kF32, Shape{Dim::symbol("batch"), 4}};
  b.output(present);
  ValueId present_kv = b.add("AllAttrs", {past_kv, constants.back()},
                             {{"float", 0.0f}}, test_node("kv"));
  b.graph().value(present_kv) =
      Value{"present_kv", DType::kBF16,
            Shape{Dim::symbol("batch"), Dim::symbol("total_seq"), 2}};
  b.output(present_kv);

  b.state_pair(past, present,
               Tensor::from_vector<float>({1, 4}, {1.0f, 2.0f, 3.0f, 4.0f}));
  b.state_pair(past_kv, present_kv);
  b.set_metadata("producer", "native_test");
  b.set_metadata("note", std::string("nul\0byte", 8));
  b.set_metadata("empty", "");
  return built(std::move(b));
}

Graph weights_graph(int64_t elements) {
  GraphBuilder b("weights");
  ValueId x = b.input("x", DType::kF32, Shape{elements});
  std::vector<float> values(static_cast<size_t>(elements));
  for (size_t i = 0; i < values.size(); ++i) {
    values[i] = static_cast<float>(i % 1000) * 0.5f;
  }
  ValueId w = b.constant("w", Tensor::from_vector<float>({elements}, values));
  b.output(b.add("AllAttrs", {x, w}, {}, test_node("use_w")), "y");
  return built(std::move(b));
}

AlignedImage::AlignedImage(const std::vector<uint8_t>& bytes)
    : size_(bytes.size()) {
  size_t rounded = align_to_segment(std::max<size_t>(bytes.size(), 1));
  auto* memory = static_cast<uint8_t*>(
      std::aligned_alloc(kSeqrtSegmentAlignment, rounded));
  if (!bytes.empty()) std::memcpy(memory, bytes.data(), bytes.size());
  data_ = std::shared_ptr<uint8_t>(memory, [](uint8_t* p) { std::free(p); });
}

Result<Graph> read_test_image(const std::vector<uint8_t>& bytes) {
  AlignedImage image(bytes);
  return read_seqrt_buffer(image.owner(), image.data(), image.size(),
                           test_read_options());
}

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "seqrt_native_" + std::to_string(::getpid()) +
         "_" + name;
}

}  // namespace testing_models
}  // namespace seqrt
