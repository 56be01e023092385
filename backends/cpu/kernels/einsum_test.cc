// Einsum against the reference kernel: the GEMM path (matmul, batched,
// transposed output, inner and outer products) and the strided loop
// (diagonals, sums of one operand, three operands, ellipsis broadcast,
// implicit output), in f32, f16, f64 and i64.
#include <gtest/gtest.h>

#include "backends/cpu/kernels/kernel_test_util.h"

namespace seqrt::cpu {
namespace {

using namespace kernel_testing;  // NOLINT

void expect_einsum(const std::string& equation, const std::vector<Tensor>& in,
                   double tol = 1e-5) {
  SCOPED_TRACE(equation);
  expect_matches_reference(kOnnxDomain, "Einsum", in, {{"equation", equation}},
                           tol);
}

TEST(CpuEinsum, GemmShapedEquations) {
  expect_einsum("ij,jk->ik", {uniform({7, 9}, 1), uniform({9, 5}, 2)});
  expect_einsum("bij,bjk->bik", {uniform({3, 7, 9}, 3), uniform({3, 9, 5}, 4)});
  expect_einsum("bhqd,bhkd->bhqk",
                {uniform({2, 3, 6, 8}, 5), uniform({2, 3, 7, 8}, 6)});
  expect_einsum("ij,jk->ki", {uniform({7, 9}, 7), uniform({9, 5}, 8)});
  expect_einsum("i,i", {uniform({40}, 9), uniform({40}, 10)});
  expect_einsum("i,j->ij", {uniform({4}, 11), uniform({6}, 12)});
  expect_einsum("ki,kj->ij", {uniform({9, 7}, 29), uniform({9, 5}, 30)});
  expect_einsum("bkm,bnk->bnm",
                {uniform({2, 6, 3}, 31), uniform({2, 4, 6}, 32)});
  expect_einsum("ij,jk->ik", {uniform({3, 0}, 33), uniform({0, 2}, 34)});
  expect_einsum("ij,jk",
                {uniform({3, 4}, 13, -1, 1, DType::kF16),
                 uniform({4, 2}, 14, -1, 1, DType::kF16)},
                3e-3);
}

TEST(CpuEinsum, StridedLoopEquations) {
  expect_einsum("ii->i", {uniform({5, 5}, 15)});
  expect_einsum("bii->b", {uniform({3, 4, 4}, 16)});
  expect_einsum("ij->", {uniform({3, 4}, 17)});
  expect_einsum("ij->j", {uniform({3, 4}, 18)});
  expect_einsum("ij,jk,kl->il", {uniform({2, 3}, 19), uniform({3, 4}, 20),
                                 uniform({4, 5}, 21)});
  expect_einsum("...ij,...jk->...ik",
                {uniform({2, 1, 3, 4}, 22), uniform({5, 4, 2}, 23)});
  expect_einsum("ji", {uniform({3, 4}, 24)});
  expect_einsum("ij,jk->ik",
                {uniform({3, 4}, 25, -1, 1, DType::kF64),
                 uniform({4, 2}, 26, -1, 1, DType::kF64)},
                1e-12);
  expect_einsum("ij,jk->ik",
                {uniform({3, 4}, 27, -9, 9, DType::kI64),
                 uniform({4, 2}, 28, -9, 9, DType::kI64)},
                0);
}

}  // namespace
}  // namespace seqrt::cpu
