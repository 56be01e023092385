// seqrt::NeuralMemory with `position` as a graph input, compiled by the
// Vulkan backend: the device reads it (chunk alignment), a negative one
// fails the run naming the node, and the next run works again.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "backends/reference/reference_backend.h"
#include "backends/vulkan/test_util.h"
#include "compiler/infer/infer_graph.h"
#include "graph/builder.h"
#include "testing/random_tensor.h"

namespace seqrt::vulkan {
namespace {

constexpr int64_t kB = 2, kH = 2, kT = 5, kD = 8, kM = 16;

// NeuralMemory "memory" (depth 2, chunk 4) with every input a graph input.
Graph memory_graph() {
  GraphBuilder b("memory");
  const int64_t params = 2 * kD * kM;
  std::vector<ValueId> in = {
      b.input("q", DType::kF32, Shape{kB, kH, kT, kD}),
      b.input("k", DType::kF32, Shape{kB, kH, kT, kD}),
      b.input("v", DType::kF32, Shape{kB, kH, kT, kD}),
      b.input("theta", DType::kF32, Shape{kB, kH, kT}),
      b.input("eta", DType::kF32, Shape{kB, kH, kT}),
      b.input("alpha", DType::kF32, Shape{kB, kH, kT}),
      b.input("W1", DType::kF32, Shape{kH, kD, kM}),
      b.input("W2", DType::kF32, Shape{kH, kM, kD}),
      b.input("past_state", DType::kF32, Shape{kB, kH, 3 * params}),
      b.input("position", DType::kI64, Shape{kB})};
  NodeOptions options;
  options.name = "memory";
  options.domain = kSeqrtDomain;
  std::vector<ValueId> out =
      b.add_node("NeuralMemory", in, {{"chunk_size", int64_t{4}}}, 2, options);
  b.output(out[0], "y");
  b.output(out[1], "present_state");
  Result<Graph> graph = std::move(b).build();
  EXPECT_TRUE(graph.is_ok()) << graph.status().to_string();
  Graph g = std::move(graph).value();
  Status status = infer_graph(g);
  EXPECT_TRUE(status.is_ok()) << status.to_string();
  return g;
}

std::vector<Tensor> memory_inputs(std::vector<int64_t> positions) {
  const int64_t params = 2 * kD * kM;
  return {random_uniform_f32({kB, kH, kT, kD}, 1, -0.7f, 0.7f),
          random_uniform_f32({kB, kH, kT, kD}, 2, -0.7f, 0.7f),
          random_uniform_f32({kB, kH, kT, kD}, 3, -1, 1),
          random_uniform_f32({kB, kH, kT}, 4, 0, 0.05f),
          random_uniform_f32({kB, kH, kT}, 5, 0.5f, 0.95f),
          random_uniform_f32({kB, kH, kT}, 6, 0, 0.1f),
          random_uniform_f32({kH, kD, kM}, 7, -0.35f, 0.35f),
          random_uniform_f32({kH, kM, kD}, 8, -0.25f, 0.25f),
          random_uniform_f32({kB, kH, 3 * params}, 9, -0.2f, 0.2f),
          Tensor::from_vector<int64_t>({kB}, positions)};
}

void expect_close(const Tensor& want, const Tensor& got, const char* what) {
  ASSERT_EQ(want.dims(), got.dims()) << what;
  int reported = 0;
  for (int64_t i = 0; i < want.num_elements() && reported < 5; ++i) {
    double w = want.element_f64(i), g = got.element_f64(i);
    if (std::abs(w - g) > 1e-4 * (1.0 + std::abs(w))) {
      ADD_FAILURE() << what << " element " << i << ": got " << g << ", want "
                    << w;
      ++reported;
    }
  }
}

TEST(VulkanNeuralMemoryPosition, ReadsPositionOnTheDeviceAndRefusesNegative) {
  SEQRT_OPEN_VULKAN_OR_SKIP(backend);
  Graph graph = memory_graph();
  auto compiled = backend->compile(graph, CompileOptions{});
  ASSERT_TRUE(compiled.is_ok()) << compiled.status().to_string();
  auto reference = create_reference_backend()->compile(graph, CompileOptions{});
  ASSERT_TRUE(reference.is_ok()) << reference.status().to_string();
  // Mid-chunk, at a chunk start, and past 2^32 (the high word matters).
  const std::vector<std::vector<int64_t>> good = {
      {5, 8}, {0, 3}, {(int64_t{1} << 32) + 6, int64_t{1} << 40}};
  for (const std::vector<int64_t>& positions : good) {
    SCOPED_TRACE(positions[0]);
    std::vector<Tensor> inputs = memory_inputs(positions);
    auto want = (*reference)->run(inputs);
    ASSERT_TRUE(want.is_ok()) << want.status().to_string();
    auto got = (*compiled)->run(inputs);
    ASSERT_TRUE(got.is_ok()) << got.status().to_string();
    expect_close((*want)[0], (*got)[0], "y");
    expect_close((*want)[1], (*got)[1], "present_state");
  }
  // The positions decide the chunk starts: shifting them changes y.
  auto a = (*compiled)->run(memory_inputs({5, 8}));
  auto c = (*compiled)->run(memory_inputs({6, 9}));
  ASSERT_TRUE(a.is_ok() && c.is_ok());
  double diff = 0;
  for (int64_t i = 0; i < (*a)[0].num_elements(); ++i) {
    diff += std::abs((*a)[0].element_f64(i) - (*c)[0].element_f64(i));
  }
  EXPECT_GT(diff, 1e-6);
  for (int64_t bad : {int64_t{-1}, -(int64_t{5} << 32)}) {
    auto failed = (*compiled)->run(memory_inputs({3, bad}));
    ASSERT_FALSE(failed.is_ok()) << "position " << bad;
    EXPECT_NE(failed.status().message().find("'memory'"), std::string::npos)
        << failed.status().message();
    EXPECT_NE(failed.status().message().find("position"), std::string::npos)
        << failed.status().message();
  }
  std::vector<Tensor> inputs = memory_inputs({5, 8});
  auto want = (*reference)->run(inputs);
  auto again = (*compiled)->run(inputs);
  ASSERT_TRUE(want.is_ok() && again.is_ok())
      << (again.is_ok() ? "" : again.status().to_string());
  expect_close((*want)[0], (*again)[0], "y after a failed run");
}

}  // namespace
}  // namespace seqrt::vulkan
