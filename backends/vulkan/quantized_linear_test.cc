// The weight-only quantized Linear on Vulkan (kernels/quantized_linear.cc):
// which path the plan takes (the GEMV up to 8 rows, the tiled GEMM above,
// the GEMM when the GEMV is switched off or its workgroups pass the
// device's grid) and that every path matches the reference, with no
// validation message. The value cases at many sizes are conformance's
// (tests/conformance/cases/quantized_linear_cases.cc).
#include <random>

#include "backends/reference/reference_backend.h"
#include "backends/vulkan/executable.h"
#include "backends/vulkan/test_util.h"
#include "compiler/infer/infer_graph.h"
#include "graph/builder.h"
#include "ops/linalg/quantized_linear.h"
#include "testing/random_tensor.h"

namespace seqrt::vulkan {
namespace {

Tensor random_codes(std::vector<int64_t> dims, uint32_t seed, int limit) {
  Tensor tensor = Tensor::allocate(DType::kU8, std::move(dims)).value();
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> codes(0, limit - 1);
  auto* data = static_cast<uint8_t*>(tensor.mutable_data());
  for (int64_t i = 0; i < tensor.num_elements(); ++i) {
    data[i] = static_cast<uint8_t>(codes(rng));
  }
  return tensor;
}

// Y = silu(X (rows, k) · W_real (k, n) + B), int4 codes in blocks of 16
// with zero points.
Graph quantized_linear(int64_t rows, int64_t k, int64_t n) {
  const int64_t block = 16;
  const int64_t blocks = (k + block - 1) / block;
  GraphBuilder b("quantized_linear");
  ValueId x = b.input("x", DType::kF32, Shape::from_dims({rows, k}));
  ValueId w =
      b.constant("w", random_codes({n, quantized_row_bytes(k, 4)}, 1, 256));
  ValueId bias = b.constant("b", random_uniform_f32({n}, 2));
  ValueId scale =
      b.constant("scale", random_uniform_f32({n, blocks}, 3, 0.01f, 0.05f));
  ValueId zero = b.constant("zero", random_codes({n, blocks}, 4, 16));
  NodeOptions options;
  options.domain = kSeqrtDomain;
  b.output(b.add("Linear", {x, w, bias, scale, zero},
                 {{"bits", int64_t{4}},
                  {"block_size", block},
                  {"K", k},
                  {"activation", std::string("silu")}},
                 options),
           "y");
  Graph graph = std::move(b).build().value();
  EXPECT_TRUE(infer_graph(graph).is_ok());
  return graph;
}

// Compiles `graph` with `options`, checks it against the reference and
// that its plan names `path`.
void check(const Graph& graph, int64_t rows, int64_t k,
           const VulkanOptions& options, const std::string& path) {
  SEQRT_OPEN_VULKAN_OR_SKIP(backend, options);
  auto reference = create_reference_backend();
  auto compiled = backend->compile(graph, CompileOptions{});
  ASSERT_TRUE(compiled.is_ok()) << compiled.status().to_string();
  auto expected = reference->compile(graph, CompileOptions{});
  ASSERT_TRUE(expected.is_ok()) << expected.status().to_string();
  testing::expect_first_outputs_close(
      **expected, **compiled, {random_uniform_f32({rows, k}, 5)}, 1e-4, 1e-4);
  auto plan = (*compiled)->kernel_plan({});
  ASSERT_TRUE(plan.is_ok()) << plan.status().to_string();
  ASSERT_EQ(plan->size(), 1u);
  EXPECT_NE((*plan)[0].tiling.find(path), std::string::npos)
      << (*plan)[0].tiling;
  EXPECT_EQ(device_of(*backend)->validation_messages(), 0) << fmt::format(
      "{}", fmt::join(device_of(*backend)->validation_log(), "\n"));
}

TEST(VulkanQuantizedLinear, EightRowsTakeTheGemvNineTheGemm) {
  check(quantized_linear(8, 75, 40), 8, 75, VulkanOptions{}, "quantized GEMV");
  check(quantized_linear(9, 75, 40), 9, 75, VulkanOptions{}, "quantized GEMM");
}

TEST(VulkanQuantizedLinear, TheGemmGivesTheSameWhenGemvIsOff) {
  VulkanOptions options;
  options.disable_gemv = true;
  check(quantized_linear(1, 75, 40), 1, 75, options, "quantized GEMM");
}

// 7x5x3 workgroups hold 105 GEMV workgroups (840 columns), 105 GEMM tiles
// (6720 columns): 1000 columns go to the GEMM, spread over x, y and z.
TEST(VulkanQuantizedLinear, PastTheGridTheGemmTakesADecodeStep) {
  VulkanOptions options;
  options.max_group_count = {7, 5, 3};
  check(quantized_linear(1, 32, 1000), 1, 32, options, "quantized GEMM");
  check(quantized_linear(1, 32, 800), 1, 32, options, "quantized GEMV");
}

}  // namespace
}  // namespace seqrt::vulkan
