// Products of up to 8 rows (decode steps) on the GEMV shader: every layout
// the GEMM ops give it (MatMul with batches and 1-D operands, Gemm with
// transposes and C, Linear with bias and activation, fp16 weights) against
// the reference, and the plan says which path each node took.
#include <cmath>

#include "backends/reference/reference_backend.h"
#include "backends/vulkan/executable.h"
#include "backends/vulkan/test_util.h"
#include "compiler/infer/infer_graph.h"
#include "graph/builder.h"
#include "testing/random_tensor.h"

namespace seqrt::vulkan {
namespace {

struct Product {
  std::string name;
  Graph graph;
  std::vector<std::vector<int64_t>> input_dims;
};

// One node `op` over graph inputs of `dims` and constants `weights`
// (input 1 on): the weights are what fp16 storage may convert.
Product product(const std::string& name, const std::string& op,
                std::vector<std::vector<int64_t>> dims,
                std::vector<std::vector<int64_t>> weights, AttrMap attrs = {},
                const std::string& domain = kOnnxDomain) {
  GraphBuilder b(name);
  std::vector<ValueId> inputs;
  for (size_t i = 0; i < dims.size(); ++i) {
    inputs.push_back(b.input("x" + std::to_string(i), DType::kF32,
                             Shape::from_dims(dims[i])));
  }
  for (size_t i = 0; i < weights.size(); ++i) {
    inputs.push_back(b.constant(
        "w" + std::to_string(i),
        random_uniform_f32(weights[i], static_cast<uint32_t>(20 + i))));
  }
  NodeOptions options;
  options.domain = domain;
  b.output(b.add(op, inputs, std::move(attrs), options), "y");
  Graph graph = std::move(b).build().value();
  EXPECT_TRUE(infer_graph(graph).is_ok()) << name;
  return {name, std::move(graph), dims};
}

std::vector<Product> few_row_products() {
  std::vector<Product> all;
  all.push_back(product("linear_silu", "Linear", {{1, 300}}, {{300, 70}, {70}},
                        {{"activation", std::string("silu")}}, kSeqrtDomain));
  all.push_back(product("linear_3d", "Linear", {{1, 1, 40}}, {{40, 33}}, {},
                        kSeqrtDomain));
  all.push_back(
      product("gemm_trans_b", "Gemm", {{1, 129}}, {{65, 129}, {65}},
              {{"transB", int64_t{1}}, {"alpha", 0.5f}, {"beta", 2.0f}}));
  all.push_back(product("gemm_trans_a", "Gemm", {{50, 1}}, {{50, 20}},
                        {{"transA", int64_t{1}}}));
  all.push_back(
      product("matmul_batched", "MatMul", {{3, 1, 64}}, {{3, 64, 40}}));
  all.push_back(
      product("matmul_broadcast", "MatMul", {{2, 3, 1, 17}}, {{17, 9}}));
  all.push_back(product("matmul_vector", "MatMul", {{96}}, {{96, 31}}));
  all.push_back(product("matmul_dot", "MatMul", {{1, 200}}, {{200}}));
  // A few sequences decoded together: each weight value serves every row.
  all.push_back(product("linear_rows_3", "Linear", {{3, 1, 90}}, {{90, 45}},
                        {{"activation", std::string("relu")}}, kSeqrtDomain));
  all.push_back(product("gemm_rows_8_trans_b", "Gemm", {{8, 70}}, {{37, 70}},
                        {{"transB", int64_t{1}}}));
  all.push_back(
      product("matmul_rows_5_batched", "MatMul", {{2, 5, 33}}, {{2, 33, 20}}));
  return all;
}

// Runs every product on a backend opened with `options` and checks it
// against the reference (whose weights `round` makes fp16-exact) and that
// its plan names `path`.
void check_products(const VulkanOptions& options, const std::string& path) {
  SEQRT_OPEN_VULKAN_OR_SKIP(backend, options);
  auto reference = create_reference_backend();
  for (Product& p : few_row_products()) {
    SCOPED_TRACE(p.name);
    Graph want_graph = p.graph;
    if (options.fp16_weights) {
      for (auto& [id, tensor] : want_graph.constants) {
        if (want_graph.values[id].name != "w0") continue;  // the weight
        float* data = tensor.mutable_data_as<float>();
        for (int64_t i = 0; i < tensor.num_elements(); ++i) {
          data[i] = f16_to_f32(f32_to_f16(data[i]));
        }
      }
    }
    auto compiled = backend->compile(p.graph, CompileOptions{});
    ASSERT_TRUE(compiled.is_ok()) << compiled.status().to_string();
    auto expected = reference->compile(want_graph, CompileOptions{});
    ASSERT_TRUE(expected.is_ok()) << expected.status().to_string();
    std::vector<Tensor> inputs;
    for (size_t i = 0; i < p.input_dims.size(); ++i) {
      inputs.push_back(
          random_uniform_f32(p.input_dims[i], static_cast<uint32_t>(10 + i)));
    }
    testing::expect_first_outputs_close(**expected, **compiled, inputs, 1e-5,
                                        1e-5);
    auto plan = (*compiled)->kernel_plan({});
    ASSERT_TRUE(plan.is_ok()) << plan.status().to_string();
    ASSERT_EQ(plan->size(), 1u);
    EXPECT_NE((*plan)[0].tiling.find(path), std::string::npos)
        << (*plan)[0].tiling;
  }
  EXPECT_EQ(device_of(*backend)->validation_messages(), 0) << fmt::format(
      "{}", fmt::join(device_of(*backend)->validation_log(), "\n"));
}

TEST(VulkanGemv, FewRowsMatchTheReference) {
  check_products(VulkanOptions{}, "GEMV");
}

TEST(VulkanGemv, Fp16WeightsMatchTheReference) {
  VulkanOptions options;
  options.fp16_weights = true;
  check_products(options, "GEMV");
}

TEST(VulkanGemv, TheTiledGemmGivesTheSameWhenGemvIsOff) {
  VulkanOptions options;
  options.disable_gemv = true;
  check_products(options, "tiled GEMM");
}

TEST(VulkanGemv, NineRowsTakeTheTiledGemm) {
  SEQRT_OPEN_VULKAN_OR_SKIP(backend);
  Product p = product("nine_rows", "MatMul", {{9, 16}}, {{16, 8}});
  auto compiled = backend->compile(p.graph, CompileOptions{});
  ASSERT_TRUE(compiled.is_ok()) << compiled.status().to_string();
  auto plan = (*compiled)->kernel_plan({});
  ASSERT_TRUE(plan.is_ok());
  ASSERT_EQ(plan->size(), 1u);
  EXPECT_NE((*plan)[0].tiling.find("tiled GEMM"), std::string::npos);
  EXPECT_EQ((*plan)[0].shared_bytes, 8192u);
}

}  // namespace
}  // namespace seqrt::vulkan
