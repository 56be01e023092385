// oneDNN's convolution primitive against the reference kernel: 1-D
// depthwise (Mamba's causal conv, pads on both sides), 2-D grouped with
// strides, dilations and uneven pads, auto_pad, through the CPU kernel
// with the oneDNN path forced; and constant weights prepared once at
// compile time, never reordered by a run.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backends/cpu/kernel_table.h"
#include "backends/cpu/onednn/kernel_check.h"
#include "backends/cpu/onednn/packed_weights.h"
#include "graph/builder.h"
#include "ops/registry.h"

namespace seqrt::cpu::onednn {
namespace {

using kernel_testing::uniform;
using testing::expect_onednn_matches_reference;
using testing::expect_own_path_runs_no_primitive;

using Ints = std::vector<int64_t>;

TEST(OneDnnConv, GeometriesMatchReference) {
  // Depthwise 1-D, k=4, pads 3 both sides, bias.
  expect_onednn_matches_reference(
      "Conv", {uniform({2, 8, 19}, 1), uniform({8, 1, 4}, 2), uniform({8}, 3)},
      {{"group", int64_t{8}}, {"pads", Ints{3, 3}}}, 1e-5);
  // 2-D, two groups, stride 2, dilation 2, uneven pads, no bias.
  expect_onednn_matches_reference(
      "Conv", {uniform({1, 4, 11, 9}, 4), uniform({6, 2, 3, 3}, 5)},
      {{"group", int64_t{2}},
       {"strides", Ints{2, 1}},
       {"dilations", Ints{2, 2}},
       {"pads", Ints{1, 0, 2, 1}}},
      1e-5);
  // auto_pad SAME_UPPER with stride 2.
  expect_onednn_matches_reference(
      "Conv", {uniform({1, 3, 10}, 6), uniform({5, 3, 3}, 7), uniform({5}, 8)},
      {{"auto_pad", std::string("SAME_UPPER")}, {"strides", Ints{2}}}, 1e-5);
  expect_own_path_runs_no_primitive(
      "Conv", {uniform({1, 3, 10}, 9), uniform({5, 3, 3}, 10)}, {}, 1e-5);
}

TEST(OneDnnConv, ConstantWeightsArePreparedOnce) {
  ScopedPath forced(Path::kOneDnn);
  Tensor x = uniform({1, 16, 12, 12}, 11);
  Tensor w = uniform({32, 16, 3, 3}, 12);
  Tensor b = uniform({32}, 13);
  AttrMap attrs = {{"pads", Ints{1, 1, 1, 1}}};
  GraphBuilder builder("conv");
  ValueId out =
      builder.add("Conv",
                  {builder.input("x", DType::kF32, {1, 16, 12, 12}),
                   builder.constant("w", w), builder.constant("b", b)},
                  attrs);
  builder.output(out, "y");
  Result<Graph> graph = std::move(builder).build();
  ASSERT_TRUE(graph.is_ok()) << graph.status().to_string();
  const CpuKernel* kernel = kernel_table().find(kOnnxDomain, "Conv");
  ASSERT_NE(kernel, nullptr);
  ASSERT_TRUE(kernel->prepare);
  const Node& node = graph->nodes.front();
  Result<KernelFn> run = kernel->prepare(*graph, node);
  ASSERT_TRUE(run.is_ok()) << run.status().to_string();
  auto want =
      kernel_testing::run_kernel(false, kOnnxDomain, "Conv", {x, w, b}, attrs);
  ASSERT_TRUE(want.is_ok()) << want.status().to_string();
  const int64_t reorders = weight_reorder_count();
  const int64_t executed = execute_count();
  const OpSchema* schema = OpRegistry::global().find(kOnnxDomain, "Conv");
  for (int i = 0; i < 3; ++i) {
    KernelContext ctx(node, *schema, {&x, &w, &b});
    ASSERT_TRUE((*run)(ctx).is_ok());
    kernel_testing::expect_close(ctx.outputs()[0], (*want)[0], 1e-5);
  }
  EXPECT_EQ(weight_reorder_count(), reorders);  // done by prepare, or never
  EXPECT_EQ(execute_count(), executed + 3);
}

}  // namespace
}  // namespace seqrt::cpu::onednn
