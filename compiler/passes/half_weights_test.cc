#include "compiler/passes/half_weights.h"

#include <gtest/gtest.h>

#include <cmath>

#include "compiler/passes/pass_test_util.h"

namespace seqrt {
namespace {

using pass_testing::build_or_die;
using pass_testing::random_tensor;

TEST(HalfWeights, SelectsWeightsOnlyProductsRead) {
  GraphBuilder b("products");
  ValueId x = b.input("x", DType::kF32, Shape{2, 8});
  ValueId w = b.constant("w", random_tensor({8, 8}, 1));
  ValueId shared = b.constant("shared", random_tensor({8, 8}, 2));
  ValueId v = b.constant("v", random_tensor({8, 4}, 3));
  ValueId ids = b.constant("ids", Tensor::from_vector<int64_t>({1}, {0}));
  ValueId mm = b.add("MatMul", {x, w});
  ValueId gemm = b.add("Gemm", {mm, w});
  NodeOptions seqrt_op;
  seqrt_op.domain = kSeqrtDomain;
  b.output(b.add("Linear", {gemm, v}, {}, seqrt_op), "y");
  // A table read both as a product weight and by a Gather (tied
  // embeddings) keeps its fp32 form.
  ValueId row = b.add("Gather", {shared, ids});
  b.output(b.add("MatMul", {row, shared}), "z");
  // A constant A operand is not a weight.
  ValueId a = b.constant("a", random_tensor({2, 2}, 4));
  b.output(b.add("MatMul", {a, x}), "ax");
  Graph graph = build_or_die(std::move(b));
  // w is shared by the MatMul and the Gemm, both at input 1.
  EXPECT_EQ(select_half_weights(graph), (std::set<ValueId>{w, v}));
}

// A weight a subgraph captures is read there as fp32 (a Vulkan Scan run
// as a loop binds the enclosing value to its body's kernels).
TEST(HalfWeights, KeepsWeightsASubgraphCaptures) {
  GraphBuilder body_b("body");
  ValueId s = body_b.input("s", DType::kF32, Shape{1, 8});
  ValueId x_t = body_b.input("x_t", DType::kF32, Shape{1, 8});
  ValueId captured = body_b.capture("w", DType::kF32, Shape{8, 8});
  ValueId next = body_b.add("Add", {body_b.add("MatMul", {s, captured}), x_t});
  body_b.output(next, "s_next");
  body_b.output(body_b.add("Neg", {next}), "y");
  auto body = std::make_shared<Graph>(build_or_die(std::move(body_b)));
  GraphBuilder b("scan");
  ValueId s0 = b.input("s0", DType::kF32, Shape{1, 8});
  ValueId xs = b.input("xs", DType::kF32, Shape{3, 1, 8});
  ValueId w = b.constant("w", random_tensor({8, 8}, 6));
  ValueId v = b.constant("v", random_tensor({8, 8}, 7));
  auto outs = b.add_node("Scan", {s0, xs},
                         {{"body", body}, {"num_scan_inputs", int64_t{1}}}, 2);
  b.output(b.add("MatMul", {b.add("MatMul", {outs[0], w}), v}), "z");
  b.output(outs[1], "ys");
  Graph graph = build_or_die(std::move(b));
  EXPECT_EQ(select_half_weights(graph), (std::set<ValueId>{v}));
}

TEST(HalfWeights, RoundsToNearestHalf) {
  Tensor w = random_tensor({64}, 5);
  Result<Tensor> half = to_half(w);
  ASSERT_TRUE(half.is_ok());
  EXPECT_EQ(half->dtype(), DType::kF16);
  EXPECT_EQ(half->dims(), w.dims());
  const auto* bits = static_cast<const uint16_t*>(half->data());
  for (int64_t i = 0; i < w.num_elements(); ++i) {
    float want = w.data_as<float>()[i];
    EXPECT_NEAR(f16_to_f32(bits[i]), want, std::abs(want) * 4.9e-4f + 1e-7f)
        << i;
  }
}

}  // namespace
}  // namespace seqrt
