#include "backends/reference/reference_backend.h"

#include <gtest/gtest.h>

#include "compiler/infer/infer_graph.h"
#include "graph/builder.h"

namespace seqrt {
namespace {

// y = relu(x @ w + b), with the batch dim symbolic.
Graph linear_relu() {
  GraphBuilder b("linear_relu");
  ValueId x = b.input("x", DType::kF32, {Dim::symbol("batch"), 2});
  ValueId w = b.constant("w", Tensor::from_vector<float>({2, 2}, {1, 2, 3, 4}));
  ValueId bias = b.constant("b", Tensor::from_vector<float>({2}, {-10, 0}));
  ValueId mm = b.add("MatMul", {x, w});
  ValueId sum = b.add("Add", {mm, bias});
  b.output(b.add("Relu", {sum}), "y");
  Graph graph = std::move(b).build().value();
  EXPECT_TRUE(infer_graph(graph).is_ok());
  return graph;
}

TEST(ReferenceBackend, RunsAGraph) {
  auto backend = create_reference_backend();
  EXPECT_EQ(backend->device_info().backend, "reference");
  auto exe = backend->compile(linear_relu(), CompileOptions{}).value();
  Tensor x = Tensor::from_vector<float>({2, 2}, {1, 1, 2, 3});
  std::vector<Tensor> out = exe->run({x}).value();
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].dims(), (std::vector<int64_t>{2, 2}));
  // [1,1]@w = [4,6] + b = [-6,6] -> [0,6]; [2,3]@w = [11,16] -> [1,16]
  const float* y = out[0].data_as<float>();
  EXPECT_EQ(y[0], 0.0f);
  EXPECT_EQ(y[1], 6.0f);
  EXPECT_EQ(y[2], 1.0f);
  EXPECT_EQ(y[3], 16.0f);
}

TEST(ReferenceBackend, ChecksInputs) {
  auto exe = create_reference_backend()
                 ->compile(linear_relu(), CompileOptions{})
                 .value();
  EXPECT_NE(exe->run({}).status().message().find("takes 1 inputs, got 0"),
            std::string::npos);
  Tensor wrong_dtype = Tensor::from_vector<double>({1, 2}, {1, 2});
  EXPECT_NE(exe->run({wrong_dtype}).status().message().find("must be f32"),
            std::string::npos);
  Tensor wrong_dim = Tensor::from_vector<float>({1, 3}, {1, 2, 3});
  EXPECT_NE(exe->run({wrong_dim}).status().message().find("(batch,2)"),
            std::string::npos);
}

TEST(ReferenceBackend, SymbolicDimsMustAgreeAcrossInputs) {
  GraphBuilder b("two_inputs");
  ValueId x = b.input("x", DType::kF32, {Dim::symbol("seq")});
  ValueId y = b.input("y", DType::kF32, {Dim::symbol("seq")});
  b.output(b.add("Add", {x, y}), "z");
  Graph graph = std::move(b).build().value();
  ASSERT_TRUE(infer_graph(graph).is_ok());
  auto exe =
      create_reference_backend()->compile(graph, CompileOptions{}).value();
  Status status = exe->run({Tensor::from_vector<float>({2}, {1, 2}),
                            Tensor::from_vector<float>({3}, {1, 2, 3})})
                      .status();
  EXPECT_NE(status.message().find("seq = 3 but an earlier input has seq = 2"),
            std::string::npos)
      << status.message();
}

TEST(ReferenceBackend, CompileListsUnknownOps) {
  GraphBuilder b("unknown");
  ValueId x = b.input("x", DType::kF32, {2});
  ValueId y = b.add("Frobnicate", {x});
  b.output(b.add("Wibble", {y}, {}, {"w", "custom"}), "out");
  Graph graph = std::move(b).build().value();
  auto backend = create_reference_backend();
  Status status = backend->compile(graph, CompileOptions{}).status();
  ASSERT_FALSE(status.is_ok());
  EXPECT_EQ(status.code(), StatusCode::kUnsupported);
  EXPECT_NE(status.message().find("Frobnicate (node 'Frobnicate_0')"),
            std::string::npos)
      << status.message();
  EXPECT_NE(status.message().find("custom::Wibble (node 'w')"),
            std::string::npos)
      << status.message();
  EXPECT_FALSE(backend->supports(graph, graph.nodes[0]).is_ok());
}

TEST(ReferenceBackend, TakesOnlyDeviceZero) {
  BackendOptions options;
  ASSERT_TRUE(options.set("device", "0").is_ok());
  EXPECT_TRUE(create_reference_backend(options).is_ok());
  options.device = 1;
  Result<std::unique_ptr<Backend>> other = create_reference_backend(options);
  EXPECT_EQ(other.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(other.status().message().find("device index 1"), std::string::npos);
  options = BackendOptions{};
  ASSERT_TRUE(options.set("forms", "chunked").is_ok());
  Result<std::unique_ptr<Backend>> unknown = create_reference_backend(options);
  EXPECT_EQ(unknown.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.status().message().find(
                "reference backend: no option 'forms'; it takes: device"),
            std::string::npos)
      << unknown.status().message();
}

}  // namespace
}  // namespace seqrt
