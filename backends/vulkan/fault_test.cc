// Injected out-of-memory and device-lost faults become errors naming what
// was being done, and leave other backends (and the CPU path) working.
#include "backends/vulkan/test_util.h"
#include "compiler/infer/infer_graph.h"
#include "graph/builder.h"

namespace seqrt::vulkan {
namespace {

Graph add_one() {
  GraphBuilder b("add_one");
  ValueId x = b.input("x", DType::kF32, Shape{4});
  ValueId one = b.constant("one", Tensor::from_vector<float>({1}, {1.0f}));
  b.output(b.add("Add", {x, one}), "y");
  Graph graph = std::move(b).build().value();
  EXPECT_TRUE(infer_graph(graph).is_ok());
  return graph;
}

Tensor four() { return Tensor::from_vector<float>({4}, {1, 2, 3, 4}); }

TEST(VulkanFaults, OutOfMemoryIsAnErrorNamingTheWork) {
  VulkanOptions options;
  options.inject_fault = "oom";
  SEQRT_OPEN_VULKAN_OR_SKIP(backend, options);
  auto compiled = backend->compile(add_one(), CompileOptions{});
  ASSERT_FALSE(compiled.is_ok());
  EXPECT_EQ(compiled.status().code(), StatusCode::kOutOfMemory);
  EXPECT_NE(compiled.status().message().find("constant 'one'"),
            std::string::npos)
      << compiled.status().message();
  // The fault fires once: the same backend then works.
  auto again = backend->compile(add_one(), CompileOptions{});
  ASSERT_TRUE(again.is_ok()) << again.status().to_string();
  auto out = (*again)->run({four()});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_FLOAT_EQ((*out)[0].data_as<float>()[3], 5.0f);
}

TEST(VulkanFaults, DeviceLostIsAnErrorAndOtherBackendsWork) {
  SEQRT_OPEN_VULKAN_OR_SKIP(healthy);
  SEQRT_OPEN_VULKAN_OR_SKIP(faulty);
  auto good = healthy->compile(add_one(), CompileOptions{});
  auto bad = faulty->compile(add_one(), CompileOptions{});
  ASSERT_TRUE(good.is_ok() && bad.is_ok());
  device_of(*faulty)->inject_fault(Fault::kDeviceLost);
  auto lost = (*bad)->run({four()});
  ASSERT_FALSE(lost.is_ok());
  EXPECT_NE(lost.status().message().find("device lost"), std::string::npos)
      << lost.status().message();
  EXPECT_NE(lost.status().message().find("running the graph"),
            std::string::npos);
  auto fine = (*good)->run({four()});
  ASSERT_TRUE(fine.is_ok()) << fine.status().to_string();
  EXPECT_FLOAT_EQ((*fine)[0].data_as<float>()[0], 2.0f);
}

TEST(VulkanFaults, BadFaultNameIsRejected) {
  VulkanOptions options;
  options.inject_fault = "meteor";
  Status why;
  EXPECT_EQ(testing::open_backend(why, options), nullptr);
  EXPECT_NE(why.message().find("meteor"), std::string::npos) << why.to_string();
}

}  // namespace
}  // namespace seqrt::vulkan
