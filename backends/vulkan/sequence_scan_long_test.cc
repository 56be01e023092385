// SelectiveScan over a long sequence with two channels and no z gate
// (conformance case SelectiveScan/L8192): through the kernel alone and
// through the backend's compile and run, against the reference kernel.
#include <gtest/gtest.h>

#include "backends/reference/reference_backend.h"
#include "backends/vulkan/kernels/sequence_device_testing.h"
#include "backends/vulkan/test_util.h"
#include "compiler/infer/infer_graph.h"
#include "graph/builder.h"

namespace seqrt::vulkan {
namespace {

using scan_testing::uniform;

// u, Δ, A, B, C, D skip, (no z), Δ bias: D = 2, N = 16, one group.
std::vector<Tensor> long_scan_inputs(int64_t length) {
  const int64_t d = 2, n = 16;
  return {uniform({1, d, length}, 1, -1, 1),
          uniform({1, d, length}, 2, -3, 1),
          uniform({d, n}, 3, -2, -0.05),
          uniform({1, 1, n, length}, 4, -1, 1),
          uniform({1, 1, n, length}, 5, -1, 1),
          uniform({d}, 6, -1, 1),
          Tensor(),
          uniform({d}, 7, -0.5, 0.5)};
}

TEST(VulkanScanLong, KernelMatchesReferenceOver8192Tokens) {
  auto device = sequence_testing::open_device({48, true});
  SEQRT_SKIP_IF_NO_DEVICE("vulkan", device.status());
  const std::vector<Tensor> in = long_scan_inputs(8192);
  auto want = scan_testing::run_op(kSeqrtDomain, "SelectiveScan", in, {});
  ASSERT_TRUE(want.is_ok());
  auto got = sequence_testing::run_on_device(*device, kSeqrtDomain,
                                             "SelectiveScan", in, {}, *want);
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  for (size_t i = 0; i < want->size(); ++i) {
    scan_testing::expect_close(got->outputs[i], (*want)[i], 1e-4,
                               "output " + std::to_string(i));
  }
  EXPECT_EQ((*device)->validation_messages(), 0);
}

TEST(VulkanScanLong, BackendMatchesReferenceOver8192Tokens) {
  SEQRT_OPEN_VULKAN_OR_SKIP(backend);
  const std::vector<Tensor> in = long_scan_inputs(8192);
  GraphBuilder builder("long_scan");
  std::vector<ValueId> ids;
  std::vector<Tensor> feeds;
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i].empty()) {
      ids.push_back(kNoValue);
      continue;
    }
    ids.push_back(
        builder.input("in" + std::to_string(i), in[i].dtype(), in[i].shape()));
    feeds.push_back(in[i]);
  }
  NodeOptions options;
  options.domain = kSeqrtDomain;
  std::vector<ValueId> outs =
      builder.add_node("SelectiveScan", ids, {}, 2, options);
  for (ValueId id : outs) builder.output(id);
  auto graph = std::move(builder).build();
  ASSERT_TRUE(graph.is_ok()) << graph.status().to_string();
  ASSERT_TRUE(infer_graph(*graph).is_ok());
  auto want = scan_testing::run_op(kSeqrtDomain, "SelectiveScan", in, {});
  ASSERT_TRUE(want.is_ok());
  auto compiled = backend->compile(*graph, CompileOptions{});
  ASSERT_TRUE(compiled.is_ok()) << compiled.status().to_string();
  auto got = (*compiled)->run(feeds);
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  ASSERT_EQ(got->size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    scan_testing::expect_close((*got)[i], (*want)[i], 1e-4,
                               "output " + std::to_string(i));
  }
}

}  // namespace
}  // namespace seqrt::vulkan
