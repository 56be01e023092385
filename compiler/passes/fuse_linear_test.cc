#include <gtest/gtest.h>

#include "compiler/passes/pass_test_util.h"

namespace seqrt {
namespace {

using pass_testing::build_or_die;
using pass_testing::count_ops;
using pass_testing::expect_fused;
using pass_testing::expect_unchanged;
using pass_testing::random_tensor;

constexpr int64_t kK = 16, kN = 12;

struct LinearGraph {
  std::vector<int64_t> x_dims = {2, 5, kK};
  std::vector<int64_t> bias_dims = {kN};  // empty: no Add
  bool bias_first = false;
  std::string activation;  // "", "Relu", "Sigmoid", "Gelu", "GeluTanh", "SiLU"
};

ValueId add_activation(GraphBuilder& b, ValueId y, const std::string& act) {
  if (act == "Relu" || act == "Sigmoid") return b.add(act, {y});
  if (act == "Gelu") return b.add("Gelu", {y});
  if (act == "GeluTanh") {
    return b.add("Gelu", {y}, {{"approximate", std::string("tanh")}});
  }
  if (act == "SiLU") return b.add("Mul", {y, b.add("Sigmoid", {y})});
  return y;
}

Graph linear_graph(const LinearGraph& spec) {
  GraphBuilder b("linear");
  std::vector<Dim> dims(spec.x_dims.begin(), spec.x_dims.end());
  ValueId x = b.input("x", DType::kF32, dims);
  ValueId w = b.constant("w", random_tensor({kK, kN}, 71));
  ValueId y = b.add("MatMul", {x, w});
  if (!spec.bias_dims.empty()) {
    ValueId bias = b.constant("bias", random_tensor(spec.bias_dims, 72));
    y = spec.bias_first ? b.add("Add", {bias, y}) : b.add("Add", {y, bias});
  }
  b.output(add_activation(b, y, spec.activation), "y");
  return build_or_die(std::move(b));
}

Graph fuse(const LinearGraph& spec, size_t linear_count = 1) {
  return expect_fused(linear_graph(spec), fuse_linear_pass(), "Linear",
                      linear_count, {{"x", random_tensor(spec.x_dims, 73)}});
}

TEST(FuseLinear, FusesMatMulAndRowBiasAtEveryRank) {
  for (std::vector<int64_t> x_dims :
       {std::vector<int64_t>{kK}, std::vector<int64_t>{3, kK},
        std::vector<int64_t>{2, 3, kK}, std::vector<int64_t>{2, 2, 3, kK}}) {
    Graph fused = fuse({x_dims});
    ASSERT_EQ(fused.nodes.size(), 1u);
    EXPECT_EQ(fused.nodes[0].domain, kSeqrtDomain);
    EXPECT_EQ(fused.nodes[0].inputs.size(), 3u);
  }
}

TEST(FuseLinear, FlattensBroadcastBiasAndTakesItOnEitherSide) {
  Graph fused = fuse({{2, 5, kK}, {1, 1, kN}});
  ASSERT_EQ(fused.nodes.size(), 1u);
  const Tensor* bias = fused.constant(fused.nodes[0].inputs[2]);
  ASSERT_NE(bias, nullptr);
  EXPECT_EQ(bias->dims(), std::vector<int64_t>{kN});
  fuse({{2, 5, kK}, {kN}, true});
}

TEST(FuseLinear, AbsorbsTheActivation) {
  const std::pair<const char*, const char*> acts[] = {{"Relu", "relu"},
                                                      {"Sigmoid", "sigmoid"},
                                                      {"Gelu", "gelu"},
                                                      {"GeluTanh", "gelu_tanh"},
                                                      {"SiLU", "silu"}};
  for (const auto& [pattern, name] : acts) {
    SCOPED_TRACE(pattern);
    for (bool with_bias : {true, false}) {
      LinearGraph spec;
      spec.activation = pattern;
      if (!with_bias) spec.bias_dims.clear();
      Graph fused = fuse(spec);
      ASSERT_EQ(fused.nodes.size(), 1u);
      EXPECT_EQ(fused.nodes[0].attrs.at("activation").as_string(), name);
      EXPECT_EQ(fused.nodes[0].inputs.size(), with_bias ? 3u : 2u);
    }
  }
}

TEST(FuseLinear, LeavesPlainMatMulAndOtherBiases) {
  expect_unchanged(linear_graph({{2, 5, kK}, {}}), fuse_linear_pass());
  // A bias along another axis, or one that widens the product.
  expect_unchanged(linear_graph({{2, 5, kK}, {5, 1}}), fuse_linear_pass());
  expect_unchanged(linear_graph({{2, 5, kK}, {5, kN}}), fuse_linear_pass());
  expect_unchanged(linear_graph({{5, kK}, {2, 5, kN}}), fuse_linear_pass());
}

TEST(FuseLinear, LeavesSharedProductAndNonConstantOrBatchedWeights) {
  GraphBuilder shared("shared");
  ValueId x = shared.input("x", DType::kF32, {3, kK});
  ValueId product = shared.add(
      "MatMul", {x, shared.constant("w", random_tensor({kK, kN}, 1))});
  shared.output(shared.add("Add", {product, shared.constant(
                                                "b", random_tensor({kN}, 2))}),
                "y");
  shared.output(product, "product");
  expect_unchanged(build_or_die(std::move(shared)), fuse_linear_pass());

  GraphBuilder runtime_w("runtime_w");
  ValueId x2 = runtime_w.input("x", DType::kF32, {3, kK});
  ValueId w2 = runtime_w.input("w", DType::kF32, {kK, kN});
  runtime_w.output(
      runtime_w.add("Add", {runtime_w.add("MatMul", {x2, w2}),
                            runtime_w.constant("b", random_tensor({kN}, 3))}),
      "y");
  expect_unchanged(build_or_die(std::move(runtime_w)), fuse_linear_pass());

  GraphBuilder batched("batched_w");
  ValueId x3 = batched.input("x", DType::kF32, {2, 3, kK});
  ValueId w3 = batched.constant("w", random_tensor({2, kK, kN}, 4));
  batched.output(
      batched.add("Add", {batched.add("MatMul", {x3, w3}),
                          batched.constant("b", random_tensor({kN}, 5))}),
      "y");
  expect_unchanged(build_or_die(std::move(batched)), fuse_linear_pass());
}

TEST(FuseLinear, LeavesActivationWithOtherReaders) {
  GraphBuilder b("relu_read_twice");
  ValueId x = b.input("x", DType::kF32, {3, kK});
  ValueId y = b.add(
      "Add", {b.add("MatMul", {x, b.constant("w", random_tensor({kK, kN}, 6))}),
              b.constant("b", random_tensor({kN}, 7))});
  b.output(b.add("Relu", {y}), "r");
  b.output(b.add("Neg", {y}), "n");
  Graph fused =
      pass_testing::apply(build_or_die(std::move(b)), {fuse_linear_pass()});
  ASSERT_EQ(count_ops(fused, "Linear"), 1u);
  EXPECT_EQ(count_ops(fused, "Relu"), 1u);  // y has two readers: bias only
}

// What torch.onnx.export (torch 1.13) emits for nn.Linear on a 3-D input:
// MatMul(X, W^T as an initializer) + Add(bias), or, when the exporter keeps
// the transpose, MatMul(X, Transpose(Wt)); fold_constants makes the latter
// the former in the default pipeline.
TEST(FuseLinear, FusesPyTorchExportInDefaultPipeline) {
  GraphBuilder b("torch_linear");
  ValueId x =
      b.input("x", DType::kF32, {Dim::symbol("batch"), Dim(7), Dim(kK)});
  ValueId wt = b.constant("weight", random_tensor({kN, kK}, 8));
  ValueId w = b.add("Transpose", {wt}, {{"perm", std::vector<int64_t>{1, 0}}});
  ValueId y = b.add("Add", {b.constant("bias", random_tensor({kN}, 9)),
                            b.add("MatMul", {x, w})});
  b.output(b.add("Relu", {y}), "y");
  Graph graph = build_or_die(std::move(b));
  Graph optimized = pass_testing::apply(graph, default_passes());
  ASSERT_EQ(optimized.nodes.size(), 1u);
  EXPECT_EQ(optimized.nodes[0].op, "Linear");
  std::map<std::string, Tensor> feeds = {{"x", random_tensor({2, 7, kK}, 10)}};
  Tensor before = pass_testing::run_reference(graph, feeds).at("y");
  Tensor after = pass_testing::run_reference(optimized, feeds).at("y");
  pass_testing::expect_close(after, before);
}

// torch.onnx.export of Sequential(Linear, GELU, Linear, SiLU) on a 3-D
// input, node for node: MatMul(X, W^T initializer), Add(bias, product), the
// erf GELU as x*(1+Erf(x/sqrt2))*0.5, and Sigmoid + Mul. The default
// pipeline (fuse_gelu first) leaves two Linear nodes.
TEST(FuseLinear, FusesExportedMlpWithGeluAndSilu) {
  GraphBuilder b("torch_mlp");
  ValueId x = b.input("x", DType::kF32, {Dim::symbol("b"), Dim(5), Dim(kK)});
  ValueId h = b.add(
      "Add",
      {b.constant("0.bias", random_tensor({kN}, 11)),
       b.add("MatMul", {x, b.constant("w0", random_tensor({kK, kN}, 12))})});
  ValueId erf =
      b.add("Erf",
            {b.add("Div", {h, b.constant("sqrt2", Tensor::scalar<float>(
                                                      1.4142135623730951f))})});
  ValueId one_plus =
      b.add("Add", {erf, b.constant("one", Tensor::scalar<float>(1.0f))});
  ValueId gelu =
      b.add("Mul", {b.add("Mul", {h, one_plus}),
                    b.constant("half", Tensor::scalar<float>(0.5f))});
  ValueId h2 = b.add(
      "Add",
      {b.constant("2.bias", random_tensor({8}, 13)),
       b.add("MatMul", {gelu, b.constant("w2", random_tensor({kN, 8}, 14))})});
  b.output(b.add("Mul", {h2, b.add("Sigmoid", {h2})}), "y");
  Graph graph = build_or_die(std::move(b));
  Graph optimized = pass_testing::apply(graph, default_passes());
  ASSERT_EQ(optimized.nodes.size(), 2u);
  EXPECT_EQ(optimized.nodes[0].attrs.at("activation").as_string(), "gelu");
  EXPECT_EQ(optimized.nodes[1].attrs.at("activation").as_string(), "silu");
  std::map<std::string, Tensor> feeds = {{"x", random_tensor({3, 5, kK}, 15)}};
  Tensor before = pass_testing::run_reference(graph, feeds).at("y");
  Tensor after = pass_testing::run_reference(optimized, feeds).at("y");
  pass_testing::expect_close(after, before);
}

}  // namespace
}  // namespace seqrt
