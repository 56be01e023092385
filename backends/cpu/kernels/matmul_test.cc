// CPU MatMul and Gemm against the reference: 1-D operands, batch
// broadcasting on either side (the folded single-GEMM path and the
// per-batch parallel path), empty dims, f16, Gemm's transposes and C
// layouts, and the errors; then the same with a constant B prepared at
// compile time (oneDNN's matmul primitive on packed weights).
#include <gtest/gtest.h>

#include "backends/cpu/kernels/kernel_test_util.h"
#include "graph/builder.h"

namespace seqrt::cpu {
namespace {

using namespace kernel_testing;  // NOLINT

TEST(CpuMatMul, ShapesAndBroadcasting) {
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>>
      shapes = {{{3, 5}, {5, 4}},          {{7}, {7, 2}},
                {{2, 3, 7}, {7}},          {{9}, {9}},
                {{2, 1, 3, 4}, {5, 4, 3}}, {{6, 33, 40}, {40, 17}},
                {{40, 17}, {6, 17, 9}},    {{4, 2, 3}, {4, 3, 5}},
                {{3, 0}, {0, 4}},          {{0, 3}, {3, 2}},
                {{64, 128}, {128, 96}}};
  uint64_t seed = 1;
  for (const auto& [a, b] : shapes) {
    SCOPED_TRACE(dims_to_string(a) + " x " + dims_to_string(b));
    expect_matches_reference(kOnnxDomain, "MatMul",
                             {uniform(a, seed++), uniform(b, seed++)}, {},
                             1e-5);
  }
}

TEST(CpuMatMul, HalfPrecision) {
  expect_matches_reference(kOnnxDomain, "MatMul",
                           {uniform({2, 4, 8}, 1, -1, 1, DType::kF16),
                            uniform({2, 8, 4}, 2, -1, 1, DType::kF16)},
                           {}, 5e-3);
}

// f64 and integers compute in double as the reference: bit-equal results.
TEST(CpuMatMul, DoubleAndIntegers) {
  for (DType dtype : {DType::kF64, DType::kI32, DType::kI64, DType::kU8}) {
    SCOPED_TRACE(dtype_name(dtype));
    expect_matches_reference(kOnnxDomain, "MatMul",
                             {uniform({3, 1, 4, 9}, 3, 0, 9, dtype),
                              uniform({5, 9, 6}, 4, 0, 9, dtype)},
                             {}, 0);
    expect_matches_reference(
        kOnnxDomain, "MatMul",
        {uniform({9}, 5, 0, 9, dtype), uniform({2, 9, 3}, 6, 0, 9, dtype)}, {},
        0);
  }
  expect_matches_reference(
      kOnnxDomain, "Gemm",
      {uniform({4, 3}, 7, -1, 1, DType::kF64),
       uniform({5, 4}, 8, -1, 1, DType::kF64),
       uniform({5}, 9, -1, 1, DType::kF64)},
      {{"transA", 1}, {"transB", 1}, {"alpha", 0.5f}, {"beta", 2.0f}}, 0);
  expect_matches_reference(kOnnxDomain, "Gemm",
                           {uniform({2, 3}, 10, -9, 9, DType::kI64),
                            uniform({3, 4}, 11, -9, 9, DType::kI64)},
                           {}, 0);
}

TEST(CpuMatMul, Errors) {
  op_testing::expect_error(
      run_cpu("MatMul", {uniform({2, 3}, 1), uniform({4, 2}, 2)}).status(),
      {"[MatMul]", "inner dims differ"});
  op_testing::expect_error(
      run_cpu("MatMul", {uniform({2, 2, 3}, 1), uniform({3, 3, 2}, 2)})
          .status(),
      {"[MatMul]", "cannot be broadcast"});
}

TEST(CpuGemm, TransposesAndC) {
  struct Case {
    std::vector<int64_t> a, b, c;
    AttrMap attrs;
  };
  const Case cases[] = {
      {{3, 4}, {4, 5}, {}, {}},
      {{3, 4}, {4, 5}, {5}, {{"alpha", 0.5f}, {"beta", 2.0f}}},
      {{4, 3}, {5, 4}, {3, 5}, {{"transA", 1}, {"transB", 1}}},
      {{2, 6}, {7, 6}, {2, 1}, {{"transB", 1}}},
      {{3, 3}, {3, 2}, {1}, {{"beta", 0.0f}}},
      {{3, 0}, {0, 2}, {3, 2}, {{"beta", 1.5f}}},
      {{70, 50}, {50, 90}, {90}, {}},
  };
  uint64_t seed = 10;
  for (const Case& c : cases) {
    std::vector<Tensor> inputs = {uniform(c.a, seed++), uniform(c.b, seed++)};
    if (!c.c.empty()) inputs.push_back(uniform(c.c, seed++));
    expect_matches_reference(kOnnxDomain, "Gemm", inputs, c.attrs, 1e-5);
  }
}

TEST(CpuGemm, Errors) {
  op_testing::expect_error(
      run_cpu("Gemm", {uniform({2, 3}, 1), uniform({3, 4}, 2), uniform({3}, 3)})
          .status(),
      {"[Gemm]", "does not broadcast to (2,4)"});
  op_testing::expect_error(
      run_cpu("Gemm", {uniform({1, 2, 3}, 1), uniform({3, 4}, 2)}).status(),
      {"[Gemm]", "must be 2-D"});
}

// Runs `op` as a compiled graph would: B (and C) constants, prepare() once,
// then the prepared kernel on A; compares with the reference kernel.
void expect_prepared_matches_reference(const std::string& op,
                                       const std::vector<Tensor>& inputs,
                                       const AttrMap& attrs, double tol) {
  GraphBuilder builder("prepared");
  const Tensor& a = inputs[0];
  std::vector<Dim> a_dims(a.dims().begin(), a.dims().end());
  std::vector<ValueId> ids = {builder.input("a", a.dtype(), a_dims)};
  for (size_t i = 1; i < inputs.size(); ++i) {
    ids.push_back(builder.constant("c" + std::to_string(i), inputs[i]));
  }
  builder.output(builder.add(op, ids, attrs), "y");
  Result<Graph> graph = std::move(builder).build();
  ASSERT_TRUE(graph.is_ok()) << graph.status().to_string();
  const Node& node = graph->nodes.front();
  const CpuKernel* kernel = kernel_table().find(kOnnxDomain, op);
  ASSERT_TRUE(kernel != nullptr && kernel->prepare);
  Result<KernelFn> prepared = kernel->prepare(*graph, node);
  ASSERT_TRUE(prepared.is_ok()) << prepared.status().to_string();
  const OpSchema* schema = OpRegistry::global().find(kOnnxDomain, op);
  std::vector<const Tensor*> args;
  for (const Tensor& t : inputs) args.push_back(&t);
  for (int run = 0; run < 2; ++run) {  // the second run reuses the primitive
    KernelContext got_ctx(node, *schema, args);
    Status status = (*prepared)(got_ctx);
    ASSERT_TRUE(status.is_ok()) << status.to_string();
    KernelContext want_ctx(node, *schema, args);
    ASSERT_TRUE(schema->reference(want_ctx).is_ok());
    expect_close(got_ctx.outputs()[0], want_ctx.outputs()[0], tol);
  }
}

TEST(CpuMatMulPrepared, ConstantWeightsOnThePrimitive) {
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>>
      shapes = {{{3, 5}, {5, 4}},       {{7}, {7, 2}},
                {{2, 3, 40}, {40, 17}}, {{2, 2, 3, 8}, {8, 33}},
                {{0, 3}, {3, 2}},       {{3, 0}, {0, 4}},
                {{128, 96}, {96, 130}}, {{4, 2, 3}, {4, 3, 5}}};
  uint64_t seed = 100;
  for (const auto& [a, b] : shapes) {
    SCOPED_TRACE(dims_to_string(a) + " x " + dims_to_string(b));
    expect_prepared_matches_reference(
        "MatMul", {uniform(a, seed++), uniform(b, seed++)}, {}, 1e-5);
  }
  expect_prepared_matches_reference("MatMul",
                                    {uniform({3, 16}, 1, -1, 1, DType::kF16),
                                     uniform({16, 9}, 2, -1, 1, DType::kF16)},
                                    {}, 5e-3);
}

TEST(CpuGemmPrepared, TransposesAlphaBetaAndC) {
  struct Case {
    std::vector<int64_t> a, b, c;
    AttrMap attrs;
  };
  const Case cases[] = {
      {{3, 4}, {4, 5}, {}, {}},
      {{3, 4}, {4, 5}, {5}, {}},
      {{3, 4}, {4, 5}, {1, 5}, {}},
      {{3, 4}, {4, 5}, {5}, {{"alpha", 0.5f}, {"beta", 2.0f}}},
      {{4, 3}, {5, 4}, {3, 5}, {{"transA", 1}, {"transB", 1}}},
      {{2, 6}, {7, 6}, {2, 1}, {{"transB", 1}}},
      {{3, 3}, {3, 2}, {1}, {{"beta", 0.0f}}},
      {{3, 0}, {0, 2}, {3, 2}, {{"beta", 1.5f}}},
      {{70, 50}, {90, 50}, {90}, {{"transB", 1}}},
  };
  uint64_t seed = 200;
  for (const Case& c : cases) {
    std::vector<Tensor> inputs = {uniform(c.a, seed++), uniform(c.b, seed++)};
    if (!c.c.empty()) inputs.push_back(uniform(c.c, seed++));
    expect_prepared_matches_reference("Gemm", inputs, c.attrs, 1e-5);
  }
}

}  // namespace
}  // namespace seqrt::cpu
