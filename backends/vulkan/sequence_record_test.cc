// What the sequence kernels record (host only, no device): a recorder
// that keeps the dispatches lets the tests check bindings, constants and
// grids, and that bad shapes are errors, not crashes.
#include <gtest/gtest.h>

#include <cstring>

#include "backends/vulkan/kernels/sequence_scan.h"
#include "backends/vulkan/tiling.h"
#include "ops/op_test_util.h"

namespace seqrt::vulkan {
namespace {

class ListRecorder : public Recorder {
 public:
  explicit ListRecorder(DeviceLimits limits) : limits_(limits) {}
  const DeviceLimits& limits() const override { return limits_; }
  Status dispatch(const Dispatch& d) override {
    dispatches.push_back(d);
    return Status::ok();
  }
  Result<BufferSlice> scratch(VkDeviceSize bytes) override {
    ++scratches;
    return slice(900 + scratches, bytes);  // each a buffer of its own
  }
  Status copy(const BufferSlice&, const BufferSlice&) override {
    return Status::ok();
  }
  Status fill(const BufferSlice&, uint32_t) override { return Status::ok(); }

  // A fake slice: buffer handles are only compared, never used.
  static BufferSlice slice(uint64_t id, VkDeviceSize bytes) {
    BufferSlice s;
    s.buffer = reinterpret_cast<VkBuffer>(id);
    s.bytes = bytes;
    return s;
  }

  std::vector<Dispatch> dispatches;
  int scratches = 0;

 private:
  DeviceLimits limits_;
};

DeviceLimits test_limits() {
  DeviceLimits limits;
  limits.shared_memory_bytes = 32 * 1024;
  limits.max_invocations = 256;
  limits.max_group_count = {65535, 65535, 65535};
  limits.subgroup_size = 8;
  limits.subgroup_arithmetic = false;
  limits.max_storage_buffer_range = 1u << 27;
  return limits;
}

// NodeArgs for `op` whose i-th input is slice id i+1 (absent when its dims
// are empty) and whose outputs are ids 101, 102...
NodeArgs make_args(const Node& node, std::vector<std::vector<int64_t>> in,
                   std::vector<std::vector<int64_t>> out) {
  NodeArgs args;
  args.node = &node;
  for (size_t i = 0; i < in.size(); ++i) {
    args.inputs.push_back(in[i].empty() ? BufferSlice{}
                                        : ListRecorder::slice(i + 1, 64));
    args.input_dims.push_back(in[i]);
    args.input_dtypes.push_back(in[i].empty() ? DType::kUndefined
                                              : DType::kF32);
  }
  for (size_t i = 0; i < out.size(); ++i) {
    args.outputs.push_back(ListRecorder::slice(101 + i, 64));
    args.output_dims.push_back(out[i]);
    args.output_dtypes.push_back(DType::kF32);
  }
  return args;
}

TEST(SequenceRecord, SelectiveScanBindsEveryInputOnce) {
  Node node = op_testing::make_node(
      "SelectiveScan", {},
      {true, true, true, true, true, false, false, false, false}, 2);
  node.domain = kSeqrtDomain;
  NodeArgs args = make_args(node,
                            {{2, 8, 5},
                             {2, 8, 5},
                             {8, 16},
                             {2, 2, 16, 5},
                             {2, 2, 16, 5},
                             {},
                             {},
                             {},
                             {}},
                            {{2, 8, 5}, {2, 8, 16}});
  const VulkanKernel* kernel =
      kernel_table().find(kSeqrtDomain, "SelectiveScan");
  ASSERT_NE(kernel, nullptr);
  auto tiling = kernel->plan(args, test_limits());
  ASSERT_TRUE(tiling.is_ok()) << tiling.status().to_string();
  ListRecorder recorder(test_limits());
  ASSERT_TRUE(kernel->record(args, *tiling, recorder).is_ok());
  ASSERT_EQ(recorder.dispatches.size(), 1u);
  const Dispatch& d = recorder.dispatches[0];
  EXPECT_EQ(d.shader, "seq_selective_scan");
  ASSERT_EQ(d.reads.size(), 9u);
  ASSERT_EQ(d.writes.size(), 3u);
  // Absent optional inputs stand in as u (slice 1); the counter is spare.
  for (size_t i = 5; i < 9; ++i)
    EXPECT_EQ(d.reads[i].buffer, d.reads[0].buffer);
  EXPECT_EQ(d.writes[0].buffer, args.outputs[0].buffer);
  EXPECT_EQ(d.writes[1].buffer, args.outputs[1].buffer);
  EXPECT_EQ(d.specialization.size(), 8u);
  EXPECT_EQ(d.specialization.back(), 0u) << "store counter off";
  const uint32_t channels = d.specialization[1];
  EXPECT_EQ(d.groups[0] * channels, 8u);
  EXPECT_EQ(d.groups[1], 2u);
  EXPECT_EQ(d.push_constants.size(), 32u) << "8 words: sizes, flags, tokens";
}

TEST(SequenceRecord, LongScanIsCutIntoSegmentsCarryingTheState) {
  // 40000 tokens: more loop iterations than one dispatch may run on
  // llvmpipe (tiling.h, kMaxLoopIterations).
  Node node = op_testing::make_node("SelectiveScan", {},
                                    {true, true, true, true, true}, 1);
  node.domain = kSeqrtDomain;
  NodeArgs args = make_args(node,
                            {{1, 2, 40000},
                             {1, 2, 40000},
                             {2, 16},
                             {1, 1, 16, 40000},
                             {1, 1, 16, 40000}},
                            {{1, 2, 40000}});
  const VulkanKernel* kernel =
      kernel_table().find(kSeqrtDomain, "SelectiveScan");
  ASSERT_NE(kernel, nullptr);
  auto tiling = kernel->plan(args, test_limits());
  ASSERT_TRUE(tiling.is_ok()) << tiling.status().to_string();
  auto t = scan_tiling_from(*tiling);
  ASSERT_TRUE(t.is_ok());
  ASSERT_LT(t->segment, 40000u);
  ListRecorder recorder(test_limits());
  ASSERT_TRUE(kernel->record(args, *tiling, recorder).is_ok());
  const size_t segments = (40000 + t->segment - 1) / t->segment;
  ASSERT_EQ(recorder.dispatches.size(), segments);
  uint32_t next = 0;
  for (size_t k = 0; k < segments; ++k) {
    const Dispatch& d = recorder.dispatches[k];
    uint32_t words[8];
    ASSERT_EQ(d.push_constants.size(), sizeof(words));
    std::memcpy(words, d.push_constants.data(), sizeof(words));
    EXPECT_EQ(words[6], next) << "segments follow each other";
    next = words[7];
    // Segment k > 0 reads the state the one before wrote (present is not
    // requested, so the carrier is scratch memory, not a stand-in).
    const bool reads_past = (words[5] & 1u) != 0;
    const bool writes_present = (words[5] & 2u) != 0;
    EXPECT_EQ(reads_past, k > 0);
    EXPECT_EQ(writes_present, k + 1 < segments);
    if (k > 0) {
      EXPECT_NE(d.reads[8].buffer, d.writes[0].buffer) << "not the spare";
      EXPECT_EQ(d.reads[8].buffer, recorder.dispatches[k - 1].writes[1].buffer);
      EXPECT_EQ(d.reads[8].offset, recorder.dispatches[k - 1].writes[1].offset);
    }
  }
  EXPECT_EQ(next, 40000u);
}

TEST(SequenceRecord, SelectiveScanRejectsBadShapes) {
  Node node = op_testing::make_node("SelectiveScan", {},
                                    {true, true, true, true, true}, 1);
  NodeArgs args = make_args(
      node, {{1, 6, 5}, {1, 6, 5}, {6, 4}, {1, 4, 4, 5}, {1, 4, 4, 5}},
      {{1, 6, 5}});
  auto tiling = plan_selective_scan_node(args, test_limits());
  ASSERT_FALSE(tiling.is_ok());
  EXPECT_NE(tiling.status().to_string().find("multiple of G"),
            std::string::npos);
  args.input_dims[0] = {1, 6};
  EXPECT_FALSE(plan_selective_scan_node(args, test_limits()).is_ok());
}

TEST(SequenceRecord, SelectiveScanChecksTheGrid) {
  Node node = op_testing::make_node("SelectiveScan", {},
                                    {true, true, true, true, true}, 1);
  NodeArgs args = make_args(node,
                            {{70000, 1, 5},
                             {70000, 1, 5},
                             {1, 4},
                             {70000, 1, 4, 5},
                             {70000, 1, 4, 5}},
                            {{70000, 1, 5}});
  auto tiling = plan_selective_scan_node(args, test_limits());
  ASSERT_TRUE(tiling.is_ok());
  ListRecorder recorder(test_limits());
  Status status = record_selective_scan(args, *tiling, recorder, nullptr);
  EXPECT_FALSE(status.is_ok());
  EXPECT_TRUE(recorder.dispatches.empty());
}

TEST(SequenceRecord, CausalConvRecordsOutputAndStatePasses) {
  Node node = op_testing::make_node("CausalConvWithState",
                                    {{"activation", std::string("silu")}},
                                    {true, true, false, true}, 2);
  NodeArgs args = make_args(node, {{2, 3, 7}, {3, 1, 4}, {}, {2, 3, 3}},
                            {{2, 3, 7}, {2, 3, 3}});
  const VulkanKernel* kernel =
      kernel_table().find(kOnnxDomain, "CausalConvWithState");
  ASSERT_NE(kernel, nullptr);
  auto tiling = kernel->plan(args, test_limits());
  ASSERT_TRUE(tiling.is_ok()) << tiling.status().to_string();
  ListRecorder recorder(test_limits());
  ASSERT_TRUE(kernel->record(args, *tiling, recorder).is_ok());
  ASSERT_EQ(recorder.dispatches.size(), 2u);
  EXPECT_EQ(recorder.dispatches[0].shader, "seq_causal_conv");
  EXPECT_EQ(recorder.dispatches[0].groups[1], 3u);
  EXPECT_EQ(recorder.dispatches[0].groups[2], 2u);
  EXPECT_EQ(recorder.dispatches[1].shader, "seq_causal_conv_state");
  EXPECT_EQ(recorder.dispatches[1].specialization[1], 3u) << "k - 1";
  EXPECT_EQ(recorder.dispatches[1].writes[0].buffer, args.outputs[1].buffer);
}

TEST(SequenceRecord, CausalConvRejectsAnUnknownActivation) {
  Node node = op_testing::make_node("CausalConvWithState",
                                    {{"activation", std::string("relu")}},
                                    {true, true}, 2);
  const VulkanKernel* kernel =
      kernel_table().find(kOnnxDomain, "CausalConvWithState");
  ASSERT_NE(kernel, nullptr);
  NodeArgs args =
      make_args(node, {{1, 2, 3}, {2, 1, 2}}, {{1, 2, 3}, {1, 2, 1}});
  auto tiling = kernel->plan(args, test_limits());
  ASSERT_TRUE(tiling.is_ok());
  ListRecorder recorder(test_limits());
  Status status = kernel->record(args, *tiling, recorder);
  ASSERT_FALSE(status.is_ok());
  EXPECT_NE(status.to_string().find("relu"), std::string::npos);
}

}  // namespace
}  // namespace seqrt::vulkan
