#include <gtest/gtest.h>

#include "compiler/passes/pass_test_util.h"

namespace seqrt {
namespace {

using pass_testing::build_or_die;
using pass_testing::expect_fused;
using pass_testing::expect_unchanged;
using pass_testing::random_tensor;

// x (rows,16) @ w (16,8) + bias of shape `bias_dims`.
Graph linear_graph(std::vector<int64_t> x_dims,
                   std::vector<int64_t> bias_dims) {
  GraphBuilder b("linear");
  std::vector<Dim> dims(x_dims.begin(), x_dims.end());
  ValueId x = b.input("x", DType::kF32, dims);
  ValueId w = b.constant("w", random_tensor({16, 8}, 61));
  ValueId bias = b.constant("bias", random_tensor(bias_dims, 62));
  b.output(b.add("Add", {b.add("MatMul", {x, w}), bias}), "y");
  return build_or_die(std::move(b));
}

TEST(FuseGemm, Fuses2DMatMulWithBias) {
  for (std::vector<int64_t> bias :
       {std::vector<int64_t>{8}, std::vector<int64_t>{3, 8},
        std::vector<int64_t>{3, 1}}) {
    Graph fused = expect_fused(linear_graph({3, 16}, bias), fuse_gemm_pass(),
                               "Gemm", 1, {{"x", random_tensor({3, 16}, 63)}});
    EXPECT_EQ(fused.nodes.size(), 1u);
  }
}

TEST(FuseGemm, LeavesBatchedMatMulAndWideningBias) {
  expect_unchanged(linear_graph({2, 3, 16}, {8}), fuse_gemm_pass());
  // A (2,3,8) bias would widen the (3,8) product.
  expect_unchanged(linear_graph({3, 16}, {2, 3, 8}), fuse_gemm_pass());
}

}  // namespace
}  // namespace seqrt
