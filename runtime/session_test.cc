#include "runtime/session.h"

#include <cstdio>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "graph/builder.h"
#include "importers/native/writer.h"
#include "runtime/model_loader.h"

namespace seqrt {
namespace {

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "seqrt_session_" + name;
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// z = x + y over (batch, 3).
Graph add_graph() {
  GraphBuilder b("adder");
  ValueId x = b.input("x", DType::kF32, {Dim::symbol("batch"), 3});
  ValueId y = b.input("y", DType::kF32, {Dim::symbol("batch"), 3});
  b.output(b.add("Add", {x, y}), "z");
  Result<Graph> graph = std::move(b).build();
  EXPECT_TRUE(graph.is_ok()) << graph.status().message();
  return std::move(graph).value();
}

// present = past + x: an accumulator whose state has the shape `state`.
Graph accumulator_graph(Shape state, std::optional<Tensor> initial = {}) {
  GraphBuilder b("accumulator");
  ValueId x = b.input("x", DType::kF32, {Dim::symbol("batch"), 2});
  ValueId past = b.input("past", DType::kF32, std::move(state));
  ValueId present = b.add("Add", {past, x});
  b.output(present, "present");
  b.state_pair(past, present, std::move(initial));
  Result<Graph> graph = std::move(b).build();
  EXPECT_TRUE(graph.is_ok()) << graph.status().message();
  return std::move(graph).value();
}

std::unique_ptr<Session> make_session(Graph graph,
                                      SessionOptions options = {}) {
  Result<std::unique_ptr<Session>> session =
      Session::create(std::move(graph), std::move(options));
  EXPECT_TRUE(session.is_ok()) << session.status().message();
  return session.is_ok() ? std::move(session).value() : nullptr;
}

TEST(session, RunsAGraphAndReturnsOutputsByName) {
  std::unique_ptr<Session> session = make_session(add_graph());
  ASSERT_NE(session, nullptr);
  EXPECT_EQ(session->device_info().backend, default_backend());
  Tensor x = Tensor::from_vector<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor y = Tensor::from_vector<float>({2, 3}, {10, 20, 30, 40, 50, 60});
  auto outputs = session->run({{"x", x}, {"y", y}});
  ASSERT_TRUE(outputs.is_ok()) << outputs.status().message();
  ASSERT_EQ(outputs->size(), 1u);
  EXPECT_TRUE(outputs->at("z").same_as(
      Tensor::from_vector<float>({2, 3}, {11, 22, 33, 44, 55, 66})));
}

TEST(session, UnknownFeedNamesAreErrorsNamingThem) {
  std::unique_ptr<Session> session = make_session(add_graph());
  ASSERT_NE(session, nullptr);
  Tensor x = Tensor::from_vector<float>({1, 3}, {1, 2, 3});
  auto outputs = session->run({{"x", x}, {"y", x}, {"w", x}});
  ASSERT_FALSE(outputs.is_ok());
  EXPECT_EQ(outputs.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(outputs.status().message(),
            "graph 'adder' has no input 'w'; its inputs are: x, y");
}

TEST(session, MissingInputsAreErrorsNamingThem) {
  std::unique_ptr<Session> session = make_session(add_graph());
  ASSERT_NE(session, nullptr);
  auto outputs =
      session->run({{"y", Tensor::from_vector<float>({1, 3}, {1, 2, 3})}});
  ASSERT_FALSE(outputs.is_ok());
  EXPECT_EQ(outputs.status().message(),
            "graph 'adder': no tensor fed for input 'x'");
  outputs = session->run({});
  ASSERT_FALSE(outputs.is_ok());
  EXPECT_EQ(outputs.status().message(),
            "graph 'adder': no tensor fed for input 'x', 'y'");
}

TEST(session, WrongDTypesAndShapesAreErrors) {
  std::unique_ptr<Session> session = make_session(add_graph());
  ASSERT_NE(session, nullptr);
  Tensor x = Tensor::from_vector<float>({1, 3}, {1, 2, 3});
  auto outputs = session->run(
      {{"x", x}, {"y", Tensor::from_vector<int64_t>({1, 3}, {1, 2, 3})}});
  ASSERT_FALSE(outputs.is_ok());
  EXPECT_NE(outputs.status().message().find("'y'"), std::string::npos);
  outputs = session->run(
      {{"x", x}, {"y", Tensor::from_vector<float>({3}, {1, 2, 3})}});
  ASSERT_FALSE(outputs.is_ok());
  EXPECT_NE(outputs.status().message().find("'y'"), std::string::npos);
}

TEST(session, UnfedStateStartsAtZerosWithDimsFromOtherInputs) {
  std::unique_ptr<Session> session =
      make_session(accumulator_graph({Dim::symbol("batch"), 2}));
  ASSERT_NE(session, nullptr);
  Tensor x = Tensor::from_vector<float>({2, 2}, {1, 2, 3, 4});
  auto first = session->run({{"x", x}});
  ASSERT_TRUE(first.is_ok()) << first.status().message();
  EXPECT_TRUE(first->at("present").same_as(x));
  // Carrying the state: feed present back as past.
  auto second = session->run({{"x", x}, {"past", first->at("present")}});
  ASSERT_TRUE(second.is_ok()) << second.status().message();
  EXPECT_TRUE(second->at("present").same_as(
      Tensor::from_vector<float>({2, 2}, {2, 4, 6, 8})));
}

TEST(session, UnfedStateUsesTheInitialValue) {
  Tensor initial = Tensor::from_vector<float>({1, 2}, {100, 200});
  std::unique_ptr<Session> session =
      make_session(accumulator_graph({1, 2}, initial));
  ASSERT_NE(session, nullptr);
  auto outputs =
      session->run({{"x", Tensor::from_vector<float>({1, 2}, {1, 2})}});
  ASSERT_TRUE(outputs.is_ok()) << outputs.status().message();
  EXPECT_TRUE(outputs->at("present").same_as(
      Tensor::from_vector<float>({1, 2}, {101, 202})));
}

// present = Concat(past, x) along rows: a state that grows by each run's
// rows, as a concatenated KV cache does.
Graph growing_graph(Shape state) {
  GraphBuilder b("growing");
  ValueId x = b.input("x", DType::kF32, {Dim::symbol("batch"), 2});
  ValueId past = b.input("past", DType::kF32, std::move(state));
  ValueId present = b.add("Concat", {past, x}, {{"axis", int64_t{0}}});
  b.output(present, "present");
  b.state_pair(past, present);
  Result<Graph> graph = std::move(b).build();
  EXPECT_TRUE(graph.is_ok()) << graph.status().message();
  return std::move(graph).value();
}

TEST(session, AStateDimNothingDeterminesStartsEmptyUnlessBound) {
  Graph graph = growing_graph({Dim::symbol("past_rows"), 2});
  std::unique_ptr<Session> session = make_session(graph);
  ASSERT_NE(session, nullptr);
  Tensor x = Tensor::from_vector<float>({1, 2}, {1, 2});
  auto outputs = session->run({{"x", x}});
  ASSERT_TRUE(outputs.is_ok()) << outputs.status().message();
  EXPECT_EQ(outputs->at("present").dims(), (std::vector<int64_t>{1, 2}));

  SessionOptions options;
  options.compile.dim_bindings["past_rows"] = 3;
  std::unique_ptr<Session> bound = make_session(graph, options);
  ASSERT_NE(bound, nullptr);
  outputs = bound->run({{"x", x}});
  ASSERT_TRUE(outputs.is_ok()) << outputs.status().message();
  EXPECT_EQ(outputs->at("present").dims(), (std::vector<int64_t>{4, 2}));
}

TEST(session, AnUnnamedStateDimIsAnError) {
  std::unique_ptr<Session> session =
      make_session(growing_graph({Dim::unknown(), 2}));
  ASSERT_NE(session, nullptr);
  auto outputs =
      session->run({{"x", Tensor::from_vector<float>({1, 2}, {1, 2})}});
  ASSERT_FALSE(outputs.is_ok());
  EXPECT_NE(outputs.status().message().find(
                "state input 'past' of graph 'growing' is not fed and its "
                "shape (?,2) has an unnamed dim"),
            std::string::npos)
      << outputs.status().message();
}

TEST(session, UnknownBackendIsAnErrorListingTheCompiledOnes) {
  SessionOptions options;
  options.backend = "warp-drive";
  Result<std::unique_ptr<Session>> session =
      Session::create(add_graph(), options);
  ASSERT_FALSE(session.is_ok());
  EXPECT_EQ(session.status().code(), StatusCode::kNotFound);
  EXPECT_NE(session.status().message().find("'warp-drive'"), std::string::npos);
  EXPECT_NE(session.status().message().find("reference"), std::string::npos);
}

TEST(session, CreateRejectsGraphsWithUnknownOps) {
  Graph graph = add_graph();
  graph.nodes[0].op = "Frobnicate";
  Result<std::unique_ptr<Session>> session = Session::create(std::move(graph));
  ASSERT_FALSE(session.is_ok());
  EXPECT_NE(session.status().message().find("Frobnicate"), std::string::npos);
}

TEST(session, LoadsAndRunsASeqrtFile) {
  std::string path = temp_path("adder.seqrt");
  ASSERT_TRUE(write_seqrt_file(add_graph(), path).is_ok());
  Result<std::unique_ptr<Session>> session = Session::load(path);
  ASSERT_TRUE(session.is_ok()) << session.status().message();
  Tensor x = Tensor::from_vector<float>({1, 3}, {1, 2, 3});
  auto outputs = (*session)->run({{"x", x}, {"y", x}});
  ASSERT_TRUE(outputs.is_ok()) << outputs.status().message();
  EXPECT_TRUE(
      outputs->at("z").same_as(Tensor::from_vector<float>({1, 3}, {2, 4, 6})));
  session.value().reset();
  std::remove(path.c_str());
}

TEST(session_model_loader, DetectsTheFormatByContentThenExtension) {
  std::string renamed = temp_path("adder.bin");
  ASSERT_TRUE(write_seqrt_file(add_graph(), renamed).is_ok());
  Result<ModelFormat> format = detect_model_format(renamed);
  ASSERT_TRUE(format.is_ok()) << format.status().message();
  EXPECT_EQ(*format, ModelFormat::kSeqrt);
  Result<Graph> graph = load_model(renamed);
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  EXPECT_EQ(graph->name, "adder");
  std::remove(renamed.c_str());

  std::string onnx = temp_path("model.ONNX");
  write_text(onnx, "\x08\x07");
  format = detect_model_format(onnx);
  ASSERT_TRUE(format.is_ok());
  EXPECT_EQ(*format, ModelFormat::kOnnx);
  std::remove(onnx.c_str());
}

TEST(session_model_loader, OnnxGoesToTheOnnxImporter) {
  // A ModelProto with an ir_version and a producer but no graph.
  std::string path = temp_path("model.onnx");
  write_text(path, "\x08\x07\x12\x04test");
  Result<Graph> graph = load_model(path);
  ASSERT_FALSE(graph.is_ok());
  EXPECT_EQ(graph.status().code(), StatusCode::kInvalidModel);
  EXPECT_NE(graph.status().message().find("has no graph"), std::string::npos);
  EXPECT_NE(graph.status().message().find(path), std::string::npos);
  std::remove(path.c_str());
}

TEST(session_model_loader, BadFilesAreErrorsNamingThem) {
  Result<Graph> missing = load_model(temp_path("missing.seqrt"));
  ASSERT_FALSE(missing.is_ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("missing.seqrt"),
            std::string::npos);

  std::string unknown = temp_path("notes.txt");
  write_text(unknown, "hello");
  Result<Graph> text = load_model(unknown);
  ASSERT_FALSE(text.is_ok());
  EXPECT_NE(text.status().message().find("notes.txt"), std::string::npos);
  std::remove(unknown.c_str());

  std::string damaged = temp_path("damaged.seqrt");
  write_text(damaged, "SEQRT but not really");
  Result<Graph> bad = load_model(damaged);
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("damaged.seqrt"), std::string::npos);
  std::remove(damaged.c_str());
}

}  // namespace
}  // namespace seqrt
