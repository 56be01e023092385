#include <gtest/gtest.h>

#include "compiler/passes/pass_test_util.h"

namespace seqrt {
namespace {

using pass_testing::build_or_die;
using pass_testing::count_ops;
using pass_testing::expect_fused;
using pass_testing::expect_unchanged;
using pass_testing::random_tensor;

struct LayerNormOptions {
  float exponent = 2.0f;
  bool square_by_mul = false;
  bool with_beta = true;
  int64_t second_axis = -1;
};

// The pattern nn.LayerNorm exports to before opset 17, over the last axis
// of x (2,5,8).
Graph layer_norm_graph(const LayerNormOptions& options) {
  GraphBuilder b("ln");
  ValueId x = b.input("x", DType::kF32, {2, 5, 8});
  ValueId axes = b.constant("axes", Tensor::from_vector<int64_t>({1}, {-1}));
  ValueId axes2 = b.constant(
      "axes2", Tensor::from_vector<int64_t>({1}, {options.second_axis}));
  ValueId mean = b.add("ReduceMean", {x, axes});
  ValueId d = b.add("Sub", {x, mean});
  ValueId square =
      options.square_by_mul
          ? b.add("Mul", {d, d})
          : b.add("Pow",
                  {d,
                   b.constant("two", Tensor::scalar<float>(options.exponent))});
  ValueId var = b.add("ReduceMean", {square, axes2});
  ValueId eps = b.constant("eps", Tensor::scalar<float>(1e-5f));
  ValueId root = b.add("Sqrt", {b.add("Add", {var, eps})});
  ValueId normalized = b.add("Div", {d, root});
  ValueId gamma = b.constant("gamma", random_tensor({8}, 1));
  ValueId y = b.add("Mul", {normalized, gamma});
  if (options.with_beta) {
    y = b.add("Add", {y, b.constant("beta", random_tensor({8}, 2))});
  }
  b.output(y, "y");
  return build_or_die(std::move(b));
}

TEST(FuseLayerNorm, FusesPowAndMulForms) {
  for (bool by_mul : {false, true}) {
    for (bool with_beta : {true, false}) {
      SCOPED_TRACE(testing::Message() << by_mul << with_beta);
      LayerNormOptions options;
      options.square_by_mul = by_mul;
      options.with_beta = with_beta;
      Graph fused = expect_fused(layer_norm_graph(options),
                                 fuse_layer_norm_pass(), "LayerNormalization",
                                 1, {{"x", random_tensor({2, 5, 8}, 3)}});
      EXPECT_EQ(fused.nodes.size(), 1u);
      const Node& node = fused.nodes[0];
      EXPECT_EQ(node.inputs.size(), with_beta ? 3u : 2u);
      EXPECT_EQ(node.attr("axis")->as_int(), 2);
      EXPECT_FLOAT_EQ(node.attr("epsilon")->as_float(), 1e-5f);
      EXPECT_EQ(fused.value(fused.outputs[0]).name, "y");
    }
  }
}

TEST(FuseLayerNorm, LeavesOtherPatternsAlone) {
  LayerNormOptions cube;
  cube.exponent = 3.0f;
  expect_unchanged(layer_norm_graph(cube), fuse_layer_norm_pass());
  LayerNormOptions other_axis;
  other_axis.second_axis = -2;
  Graph graph = layer_norm_graph(other_axis);
  expect_unchanged(graph, fuse_layer_norm_pass());
  EXPECT_EQ(count_ops(graph, "LayerNormalization"), 0u);
}

}  // namespace
}  // namespace seqrt
