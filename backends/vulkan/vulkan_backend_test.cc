#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "backends/reference/reference_backend.h"
#include "backends/vulkan/executable.h"
#include "backends/vulkan/shaders.h"
#include "backends/vulkan/test_util.h"
#include "compiler/infer/infer_graph.h"
#include "graph/builder.h"

namespace seqrt::vulkan {
namespace {

Graph small_model() {
  // y = Transpose(Relu(x * w + b)) reshaped, with a symbolic batch.
  GraphBuilder b("small");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), 3, 4});
  ValueId w = b.constant(
      "w", Tensor::from_vector<float>({4}, {0.5f, -1.0f, 2.0f, 1.5f}));
  ValueId bias =
      b.constant("bias", Tensor::from_vector<float>({3, 1}, {1, -2, 0.25f}));
  ValueId m = b.add("Mul", {x, w});
  ValueId a = b.add("Add", {m, bias});
  ValueId r = b.add("Relu", {a});
  ValueId e = b.add("Exp", {b.add("Neg", {r})});
  ValueId t =
      b.add("Transpose", {e}, {{"perm", std::vector<int64_t>{0, 2, 1}}});
  ValueId c = b.add("Concat", {t, t}, {{"axis", int64_t{1}}});
  b.output(c, "y");
  b.output(r, "r");
  Result<Graph> graph = std::move(b).build();
  EXPECT_TRUE(graph.is_ok()) << graph.status().to_string();
  Graph g = std::move(graph).value();
  EXPECT_TRUE(infer_graph(g).is_ok());
  return g;
}

Tensor ramp(std::vector<int64_t> dims, float scale) {
  Tensor t = Tensor::allocate(DType::kF32, dims).value();
  float* data = t.mutable_data_as<float>();
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    data[i] = scale * static_cast<float>((i * 7) % 11 - 5);
  }
  return t;
}

void expect_close(const Tensor& want, const Tensor& got) {
  ASSERT_EQ(want.dims(), got.dims());
  for (int64_t i = 0; i < want.num_elements(); ++i) {
    EXPECT_NEAR(want.element_f64(i), got.element_f64(i), 1e-5) << "at " << i;
  }
}

TEST(VulkanBackend, ReportsTheDevice) {
  SEQRT_OPEN_VULKAN_OR_SKIP(backend);
  const DeviceInfo& info = backend->device_info();
  EXPECT_EQ(info.backend, "vulkan");
  EXPECT_FALSE(info.name.empty());
  EXPECT_GT(info.shared_memory_bytes, 0u);
  EXPECT_GT(info.max_buffer_bytes, 0u);
}

TEST(VulkanBackend, MatchesTheReferenceAndReplaysPerSignature) {
  SEQRT_OPEN_VULKAN_OR_SKIP(backend);
  Graph graph = small_model();
  auto compiled = backend->compile(graph, CompileOptions{});
  ASSERT_TRUE(compiled.is_ok()) << compiled.status().to_string();
  auto reference = create_reference_backend()->compile(graph, CompileOptions{});
  ASSERT_TRUE(reference.is_ok());
  for (int64_t batch : {2, 1, 2}) {
    Tensor x = ramp({batch, 3, 4}, 0.5f);
    auto want = (*reference)->run({x});
    auto got = (*compiled)->run({x});
    ASSERT_TRUE(want.is_ok());
    ASSERT_TRUE(got.is_ok()) << got.status().to_string();
    ASSERT_EQ(got->size(), 2u);
    expect_close((*want)[0], (*got)[0]);
    expect_close((*want)[1], (*got)[1]);
  }
  auto* executable = dynamic_cast<VulkanExecutable*>(compiled->get());
  ASSERT_NE(executable, nullptr);
  EXPECT_EQ(executable->programs_recorded(), 2);  // batch 2 and batch 1
  EXPECT_EQ(device_of(*backend)->validation_messages(), 0) << fmt::format(
      "{}", fmt::join(device_of(*backend)->validation_log(), "\n"));
}

TEST(VulkanBackend, CompileListsEveryUnsupportedNode) {
  SEQRT_OPEN_VULKAN_OR_SKIP(backend);
  GraphBuilder b("unsupported");
  ValueId x = b.input("x", DType::kF32, Shape{4});
  ValueId y = b.add(
      "TopK", {x, b.constant("k", Tensor::from_vector<int64_t>({1}, {2}))}, {},
      {});
  b.output(y);
  Graph graph = std::move(b).build().value();
  auto compiled = backend->compile(graph, CompileOptions{});
  ASSERT_FALSE(compiled.is_ok());
  EXPECT_EQ(compiled.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(compiled.status().message().find("TopK"), std::string::npos)
      << compiled.status().message();
}

TEST(VulkanBackend, WrongInputDimsAreAnError) {
  SEQRT_OPEN_VULKAN_OR_SKIP(backend);
  auto compiled = backend->compile(small_model(), CompileOptions{});
  ASSERT_TRUE(compiled.is_ok());
  auto got = (*compiled)->run({ramp({2, 4, 4}, 1.0f)});
  ASSERT_FALSE(got.is_ok());
}

// An index out of range is seen only by the device: its error word fails
// the run naming the node, and the next run (word zeroed again) succeeds.
TEST(VulkanBackend, GatherIndexOutOfRangeFailsTheRunNamingTheNode) {
  SEQRT_OPEN_VULKAN_OR_SKIP(backend);
  GraphBuilder b("gather");
  ValueId data = b.input("data", DType::kF32, Shape{3, 2});
  ValueId index = b.input("index", DType::kI64, Shape{2});
  NodeOptions named;
  named.name = "pick";
  b.output(b.add("Gather", {data, index}, {}, named), "y");
  Result<Graph> graph = std::move(b).build();
  ASSERT_TRUE(graph.is_ok()) << graph.status().to_string();
  ASSERT_TRUE(infer_graph(*graph).is_ok());
  auto compiled = backend->compile(*graph, CompileOptions{});
  ASSERT_TRUE(compiled.is_ok()) << compiled.status().to_string();
  Tensor x = ramp({3, 2}, 1.0f);
  for (int64_t bad : {int64_t{3}, int64_t{-4}, int64_t{1} << 32}) {
    auto got =
        (*compiled)->run({x, Tensor::from_vector<int64_t>({2}, {0, bad})});
    ASSERT_FALSE(got.is_ok()) << "index " << bad;
    EXPECT_NE(got.status().message().find("node 'pick'"), std::string::npos)
        << got.status().message();
    EXPECT_NE(got.status().message().find("out of range"), std::string::npos)
        << got.status().message();
  }
  auto good = (*compiled)->run({x, Tensor::from_vector<int64_t>({2}, {2, -1})});
  ASSERT_TRUE(good.is_ok()) << good.status().to_string();
  EXPECT_EQ((*good)[0].element_f64(0), x.element_f64(4));
  EXPECT_EQ((*good)[0].element_f64(3), x.element_f64(5));
}

TEST(VulkanDevice, ForcedLimitsApply) {
  VulkanOptions options;
  options.shared_limit_bytes = 16384;
  options.disable_subgroup_ops = true;
  SEQRT_OPEN_VULKAN_OR_SKIP(backend, options);
  const DeviceLimits& limits = device_of(*backend)->limits();
  EXPECT_EQ(limits.shared_memory_bytes, 16384u);
  EXPECT_FALSE(limits.subgroup_arithmetic);
  EXPECT_EQ(backend->device_info().shared_memory_bytes, 16384u);
}

TEST(VulkanDevice, UnknownDeviceNameIsAnError) {
  vulkan::testing::use_lavapipe_with_validation();
  VulkanOptions options;
  options.device_name = "no such device 12345";
  auto backend = create_vulkan_backend(options);
  ASSERT_FALSE(backend.is_ok());
  EXPECT_NE(backend.status().message().find("no such device"),
            std::string::npos);
}

TEST(VulkanShaders, EveryShaderIsEmbedded) {
  for (const char* name : {"unary", "binary", "strided_copy"}) {
    const EmbeddedShader* shader = find_shader(name);
    ASSERT_NE(shader, nullptr) << name;
    EXPECT_EQ(shader->words[0], 0x07230203u);  // the SPIR-V magic number
  }
  EXPECT_EQ(find_shader("no_such_shader"), nullptr);
}

}  // namespace
}  // namespace seqrt::vulkan
