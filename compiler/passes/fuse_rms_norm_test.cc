#include <gtest/gtest.h>

#include "compiler/passes/pass_test_util.h"

namespace seqrt {
namespace {

using pass_testing::build_or_die;
using pass_testing::expect_fused;
using pass_testing::expect_unchanged;
using pass_testing::random_tensor;

enum class InverseRoot { kDiv, kReciprocal, kOneOver, kPowHalf };

struct RmsOptions {
  InverseRoot form = InverseRoot::kDiv;
  bool square_by_mul = false;
  float eps = 1e-6f;
  float root_exponent = -0.5f;
};

// x (3,16) normalised over the last axis, then scaled by gamma (16).
Graph rms_graph(const RmsOptions& options) {
  GraphBuilder b("rms");
  ValueId x = b.input("x", DType::kF32, {3, 16});
  ValueId square =
      options.square_by_mul
          ? b.add("Mul", {x, x})
          : b.add("Pow", {x, b.constant("two", Tensor::scalar<float>(2))});
  ValueId axes = b.constant("axes", Tensor::from_vector<int64_t>({1}, {1}));
  ValueId mean = b.add("ReduceMean", {square, axes});
  ValueId a =
      b.add("Add", {mean, b.constant("eps", Tensor::scalar(options.eps))});
  ValueId normalized = kNoValue;
  switch (options.form) {
    case InverseRoot::kDiv:
      normalized = b.add("Div", {x, b.add("Sqrt", {a})});
      break;
    case InverseRoot::kReciprocal:
      normalized = b.add("Mul", {x, b.add("Reciprocal", {b.add("Sqrt", {a})})});
      break;
    case InverseRoot::kOneOver: {
      ValueId one = b.constant("one", Tensor::scalar<float>(1));
      normalized = b.add("Mul", {b.add("Div", {one, b.add("Sqrt", {a})}), x});
      break;
    }
    case InverseRoot::kPowHalf: {
      ValueId half = b.constant("half", Tensor::scalar(options.root_exponent));
      normalized = b.add("Mul", {x, b.add("Pow", {a, half})});
      break;
    }
  }
  ValueId gamma = b.constant("gamma", random_tensor({16}, 4));
  b.output(b.add("Mul", {gamma, normalized}), "y");
  return build_or_die(std::move(b));
}

TEST(FuseRmsNorm, FusesEachInverseRootForm) {
  for (InverseRoot form : {InverseRoot::kDiv, InverseRoot::kReciprocal,
                           InverseRoot::kOneOver, InverseRoot::kPowHalf}) {
    for (bool by_mul : {false, true}) {
      SCOPED_TRACE(testing::Message() << static_cast<int>(form) << by_mul);
      RmsOptions options;
      options.form = form;
      options.square_by_mul = by_mul;
      Graph fused = expect_fused(rms_graph(options), fuse_rms_norm_pass(),
                                 "RMSNormalization", 1,
                                 {{"x", random_tensor({3, 16}, 5)}});
      ASSERT_EQ(fused.nodes.size(), 1u);
      EXPECT_EQ(fused.nodes[0].attr("axis")->as_int(), 1);
      EXPECT_FLOAT_EQ(fused.nodes[0].attr("epsilon")->as_float(), 1e-6f);
    }
  }
}

TEST(FuseRmsNorm, LeavesOtherPatternsAlone) {
  RmsOptions not_half;
  not_half.form = InverseRoot::kPowHalf;
  not_half.root_exponent = -0.25f;
  expect_unchanged(rms_graph(not_half), fuse_rms_norm_pass());
  RmsOptions negative_eps;
  negative_eps.eps = -1e-6f;
  expect_unchanged(rms_graph(negative_eps), fuse_rms_norm_pass());
}

}  // namespace
}  // namespace seqrt
