#include <gtest/gtest.h>

#include <cmath>

#include "compiler/passes/pass_test_util.h"

namespace seqrt {
namespace {

using pass_testing::build_or_die;
using pass_testing::expect_fused;
using pass_testing::expect_unchanged;
using pass_testing::random_tensor;

ValueId scalar(GraphBuilder& b, float value) {
  static int index = 0;
  return b.constant("c" + std::to_string(index++), Tensor::scalar(value));
}

// nn.GELU(): Mul(Mul(x, Add(Erf(Div(x, sqrt2)), 1)), 0.5), or with the 0.5
// applied to x first as Hugging Face writes it.
Graph erf_gelu(float root, bool half_first) {
  GraphBuilder b("gelu");
  ValueId x = b.input("x", DType::kF32, {4, 6});
  ValueId erf = b.add("Erf", {b.add("Div", {x, scalar(b, root)})});
  ValueId a = b.add("Add", {erf, scalar(b, 1.0f)});
  ValueId y = half_first
                  ? b.add("Mul", {b.add("Mul", {x, scalar(b, 0.5f)}), a})
                  : b.add("Mul", {b.add("Mul", {x, a}), scalar(b, 0.5f)});
  b.output(y, "y");
  return build_or_die(std::move(b));
}

// F.gelu(approximate="tanh"): x^3 as x*(x*x), the 0.5 applied last.
Graph tanh_gelu(float cubic, bool pow_cube) {
  GraphBuilder b("gelu_tanh");
  ValueId x = b.input("x", DType::kF32, {4, 6});
  ValueId cube = pow_cube ? b.add("Pow", {x, scalar(b, 3.0f)})
                          : b.add("Mul", {x, b.add("Mul", {x, x})});
  ValueId inner = b.add("Add", {x, b.add("Mul", {scalar(b, cubic), cube})});
  ValueId t = b.add(
      "Tanh",
      {b.add("Mul",
             {scalar(b, static_cast<float>(std::sqrt(2.0 / M_PI))), inner})});
  ValueId a = b.add("Add", {scalar(b, 1.0f), t});
  b.output(b.add("Mul", {scalar(b, 0.5f), b.add("Mul", {x, a})}), "y");
  return build_or_die(std::move(b));
}

TEST(FuseGelu, FusesErfForm) {
  for (bool half_first : {false, true}) {
    Graph fused =
        expect_fused(erf_gelu(std::sqrt(2.0f), half_first), fuse_gelu_pass(),
                     "Gelu", 1, {{"x", random_tensor({4, 6}, 6, 2.0f)}});
    ASSERT_EQ(fused.nodes.size(), 1u);
    EXPECT_EQ(fused.nodes[0].attr("approximate"), nullptr);
  }
}

TEST(FuseGelu, FusesTanhForm) {
  for (bool pow_cube : {false, true}) {
    Graph fused =
        expect_fused(tanh_gelu(0.044715f, pow_cube), fuse_gelu_pass(), "Gelu",
                     1, {{"x", random_tensor({4, 6}, 7, 2.0f)}});
    ASSERT_EQ(fused.nodes.size(), 1u);
    EXPECT_EQ(fused.nodes[0].attr("approximate")->as_string(), "tanh");
  }
}

TEST(FuseGelu, LeavesOtherConstantsAlone) {
  expect_unchanged(erf_gelu(1.5f, false), fuse_gelu_pass());
  expect_unchanged(tanh_gelu(0.05f, false), fuse_gelu_pass());
}

}  // namespace
}  // namespace seqrt
