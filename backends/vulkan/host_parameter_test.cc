// Host parameters (kernels/kernel_util.h): a kernel's parameter input that
// is a graph input is read on the host at each run, and the executable
// records (and caches, at most kMaxRecordings) per value.
#include <string>
#include <vector>

#include "backends/reference/reference_backend.h"
#include "backends/vulkan/executable.h"
#include "backends/vulkan/kernels/kernel_util.h"
#include "backends/vulkan/test_util.h"
#include "compiler/infer/infer_graph.h"
#include "graph/builder.h"

namespace seqrt::vulkan {
namespace {

Graph typed(GraphBuilder&& b) {
  Result<Graph> graph = std::move(b).build();
  EXPECT_TRUE(graph.is_ok()) << graph.status().to_string();
  Graph g = std::move(graph).value();
  Status inferred = infer_graph(g);
  EXPECT_TRUE(inferred.is_ok()) << inferred.to_string();
  return g;
}

Tensor ramp(std::vector<int64_t> dims) {
  Tensor t = Tensor::allocate(DType::kF32, dims).value();
  float* data = t.mutable_data_as<float>();
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    data[i] = 0.5f * static_cast<float>((i * 7) % 11 - 5);
  }
  return t;
}

Tensor i64s(std::vector<int64_t> values) {
  const int64_t count = static_cast<int64_t>(values.size());
  return Tensor::from_vector<int64_t>({count}, std::move(values));
}

// y = Relu(Reshape(x, shape)) with x 2x6 and the shape a graph input.
Graph reshape_by_input() {
  GraphBuilder b("reshape_by_input");
  ValueId x = b.input("x", DType::kF32, Shape{2, 6});
  ValueId shape = b.input("shape", DType::kI64, Shape{2});
  b.output(b.add("Relu", {b.add("Reshape", {x, shape})}), "y");
  return typed(std::move(b));
}

struct Compiled {
  std::unique_ptr<Executable> vulkan;
  std::unique_ptr<Executable> reference;
};

Compiled compile_both(Backend& backend, const Graph& graph) {
  Compiled both;
  auto vulkan = backend.compile(graph, CompileOptions{});
  EXPECT_TRUE(vulkan.is_ok()) << vulkan.status().to_string();
  if (vulkan.is_ok()) both.vulkan = std::move(vulkan).value();
  auto reference = create_reference_backend()->compile(graph, CompileOptions{});
  EXPECT_TRUE(reference.is_ok()) << reference.status().to_string();
  if (reference.is_ok()) both.reference = std::move(reference).value();
  return both;
}

void expect_as_reference(const Compiled& both,
                         const std::vector<Tensor>& inputs) {
  ASSERT_NE(both.vulkan, nullptr);
  ASSERT_NE(both.reference, nullptr);
  auto want = both.reference->run(inputs);
  auto got = both.vulkan->run(inputs);
  ASSERT_TRUE(want.is_ok()) << want.status().to_string();
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  ASSERT_EQ(want->size(), got->size());
  for (size_t k = 0; k < want->size(); ++k) {
    const Tensor& w = (*want)[k];
    const Tensor& g = (*got)[k];
    ASSERT_EQ(w.dims(), g.dims()) << "output " << k;
    for (int64_t i = 0; i < w.num_elements(); ++i) {
      EXPECT_NEAR(g.element_f64(i), w.element_f64(i), 1e-5)
          << "output " << k << " at " << i;
    }
  }
}

const VulkanExecutable& vulkan_of(const Compiled& both) {
  return dynamic_cast<const VulkanExecutable&>(*both.vulkan);
}

TEST(HostParameters, ReshapeRecordsPerShapeValueAndReusesIt) {
  SEQRT_OPEN_VULKAN_OR_SKIP(backend);
  Compiled both = compile_both(*backend, reshape_by_input());
  ASSERT_NE(both.vulkan, nullptr);
  const Tensor x = ramp({2, 6});
  for (const std::vector<int64_t>& shape :
       std::vector<std::vector<int64_t>>{{3, 4}, {4, 3}, {-1, 2}, {3, 4}}) {
    expect_as_reference(both, {x, i64s(shape)});
  }
  // {3,4} came twice: three values, three recordings.
  EXPECT_EQ(vulkan_of(both).recordings_made(), 3);
  EXPECT_EQ(vulkan_of(both).programs_recorded(), 3);
}

TEST(HostParameters, TheCacheKeepsTheMostRecentRecordings) {
  SEQRT_OPEN_VULKAN_OR_SKIP(backend);
  Compiled both = compile_both(*backend, reshape_by_input());
  ASSERT_NE(both.vulkan, nullptr);
  const VulkanExecutable& executable = vulkan_of(both);
  // 12 elements as {1,12}, {12,1}, {2,6}... and negative forms: more
  // distinct values than the cache holds.
  std::vector<std::vector<int64_t>> shapes;
  for (int64_t rows : {1, 2, 3, 4, 6, 12}) {
    shapes.push_back({rows, 12 / rows});
    shapes.push_back({rows, -1});
    shapes.push_back({-1, 12 / rows});
  }
  ASSERT_GT(shapes.size(), VulkanExecutable::kMaxRecordings);
  const Tensor input = ramp({2, 6});
  for (const auto& shape : shapes) {
    ASSERT_NO_FATAL_FAILURE(expect_as_reference(both, {input, i64s(shape)}));
  }
  const int made = static_cast<int>(shapes.size());
  EXPECT_EQ(executable.recordings_made(), made);
  EXPECT_EQ(executable.programs_recorded(),
            static_cast<int>(VulkanExecutable::kMaxRecordings));
  // The most recent value is cached; the first was dropped (least
  // recently used) and records again.
  expect_as_reference(both, {input, i64s(shapes.back())});
  EXPECT_EQ(executable.recordings_made(), made);
  expect_as_reference(both, {input, i64s(shapes.front())});
  EXPECT_EQ(executable.recordings_made(), made + 1);
  EXPECT_EQ(executable.programs_recorded(),
            static_cast<int>(VulkanExecutable::kMaxRecordings));
}

TEST(HostParameters, SliceCumSumTriluAndTileTakeGraphInputs) {
  SEQRT_OPEN_VULKAN_OR_SKIP(backend);
  GraphBuilder b("parameters");
  ValueId x = b.input("x", DType::kF32, Shape{4, 5});
  ValueId ends = b.input("ends", DType::kI64, Shape{2});
  ValueId axis = b.input("axis", DType::kI64, Shape{});
  ValueId k = b.input("k", DType::kI64, Shape{});
  ValueId repeats = b.input("repeats", DType::kI64, Shape{2});
  ValueId starts = b.constant("starts", i64s({0, 1}));
  b.output(b.add("Slice", {x, starts, ends}), "sliced");
  b.output(b.add("CumSum", {x, axis}), "summed");
  b.output(b.add("Trilu", {x, k}, {{"upper", int64_t{0}}}), "lower");
  b.output(b.add("Tile", {x, repeats}), "tiled");
  Compiled both = compile_both(*backend, typed(std::move(b)));
  const Tensor input = ramp({4, 5});
  auto scalar = [](int64_t v) { return Tensor::scalar<int64_t>(v); };
  expect_as_reference(
      both, {input, i64s({3, 4}), scalar(0), scalar(1), i64s({1, 2})});
  expect_as_reference(
      both, {input, i64s({4, -1}), scalar(1), scalar(-1), i64s({2, 1})});
  expect_as_reference(
      both, {input, i64s({2, 5}), scalar(-1), scalar(0), i64s({1, 1})});
  EXPECT_EQ(vulkan_of(both).recordings_made(), 3);
}

TEST(HostParameters, AValueTheOpRejectsIsAnErrorNamingNodeAndValue) {
  SEQRT_OPEN_VULKAN_OR_SKIP(backend);
  Compiled both = compile_both(*backend, reshape_by_input());
  ASSERT_NE(both.vulkan, nullptr);
  auto run = both.vulkan->run({ramp({2, 6}), i64s({-1, -1})});
  ASSERT_FALSE(run.is_ok());
  const std::string message = run.status().to_string();
  EXPECT_NE(message.find("Reshape"), std::string::npos) << message;
  EXPECT_NE(message.find("'shape' = [-1, -1]"), std::string::npos) << message;
  // The executable still runs good values after it.
  expect_as_reference(both, {ramp({2, 6}), i64s({6, 2})});

  GraphBuilder b("tile_by_input");
  ValueId x = b.input("x", DType::kF32, Shape{2, 3});
  ValueId repeats = b.input("repeats", DType::kI64, Shape{2});
  b.output(b.add("Tile", {x, repeats}), "y");
  Compiled tile = compile_both(*backend, typed(std::move(b)));
  ASSERT_NE(tile.vulkan, nullptr);
  auto bad = tile.vulkan->run({ramp({2, 3}), i64s({2, -3})});
  ASSERT_FALSE(bad.is_ok());
  const std::string tile_message = bad.status().to_string();
  EXPECT_NE(tile_message.find("Tile"), std::string::npos) << tile_message;
  EXPECT_NE(tile_message.find("[2, -3]"), std::string::npos) << tile_message;
}

TEST(HostParameters, AParameterOverTheLimitIsAnErrorAtRunTime) {
  SEQRT_OPEN_VULKAN_OR_SKIP(backend);
  GraphBuilder b("reshape_any_rank");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("n")});
  ValueId shape = b.input("shape", DType::kI64, Shape{Dim::symbol("rank")});
  b.output(b.add("Reshape", {x, shape}), "y");
  Compiled both = compile_both(*backend, typed(std::move(b)));
  ASSERT_NE(both.vulkan, nullptr);
  std::vector<int64_t> ones(kMaxHostParameterElements + 1, 1);
  auto run = both.vulkan->run({ramp({1}), i64s(ones)});
  ASSERT_FALSE(run.is_ok());
  EXPECT_NE(run.status().message().find("at most 64"), std::string::npos)
      << run.status().to_string();
}

TEST(HostParameters, AParameterMadeOnTheDeviceIsRefused) {
  SEQRT_OPEN_VULKAN_OR_SKIP(backend);
  // shape = s + 0: computed from data inside the graph, so the Vulkan
  // backend alone would need to read it back mid-recording.
  GraphBuilder b("device_parameter");
  ValueId x = b.input("x", DType::kF32, Shape{2, 6});
  ValueId s = b.input("s", DType::kI64, Shape{2});
  ValueId zero = b.constant("zero", i64s({0, 0}));
  ValueId shape = b.add("Add", {s, zero});
  b.output(b.add("Reshape", {x, shape}), "y");
  auto compiled = backend->compile(typed(std::move(b)), CompileOptions{});
  ASSERT_FALSE(compiled.is_ok());
  const std::string message = compiled.status().to_string();
  EXPECT_NE(message.find("computed on the device"), std::string::npos)
      << message;
  EXPECT_NE(message.find("vulkan,cpu"), std::string::npos) << message;
}

}  // namespace
}  // namespace seqrt::vulkan
