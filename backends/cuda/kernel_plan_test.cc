// The CUDA kernel-level plan (`seqrt inspect --plan`) of a graph of
// sequence ops on the host: which form each op runs for the bound sizes,
// where its state lives, and that every tiling respects the device's
// limit. Runs without a GPU.
#include "backends/cuda/kernel_plan.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "graph/builder.h"

namespace seqrt::cuda {
namespace {

const Dim kT = Dim::symbol("T");

// Retention, SSD, LinearAttention (gated_delta and gated per head) and an
// Add, all over a symbolic sequence length T.
Graph sequence_graph() {
  GraphBuilder b("plan");
  NodeOptions seqrt_domain;
  seqrt_domain.domain = kSeqrtDomain;
  auto input = [&](const char* name, Shape shape) {
    return b.input(name, DType::kF32, std::move(shape));
  };
  ValueId q = input("q", Shape{Dim(1), Dim(4), kT, Dim(64)});
  ValueId v = input("v", Shape{Dim(1), Dim(4), kT, Dim(32)});
  NodeOptions retention = seqrt_domain;
  retention.name = "retention";
  b.output(
      b.add_node("Retention", {q, q, v},
                 {{"chunk_size", Attribute(int64_t{32})}}, 1, retention)[0],
      "y_retention");
  ValueId x = input("x", Shape{Dim(1), kT, Dim(8), Dim(64)});
  ValueId dt = input("dt", Shape{Dim(1), kT, Dim(8)});
  ValueId a = input("A", Shape{Dim(8)});
  ValueId bc = input("B", Shape{Dim(1), kT, Dim(1), Dim(128)});
  NodeOptions ssd = seqrt_domain;
  ssd.name = "ssd";
  b.output(b.add_node("SSD", {x, dt, a, bc, bc}, {}, 1, ssd)[0], "y_ssd");
  ValueId lq = input("lq", Shape{Dim(1), kT, Dim(4 * 64)});
  ValueId lk = input("lk", Shape{Dim(1), kT, Dim(2 * 64)});
  ValueId lv = input("lv", Shape{Dim(1), kT, Dim(2 * 32)});
  ValueId decay = input("decay", Shape{Dim(1), kT, Dim(2)});
  ValueId beta = input("beta", Shape{Dim(1), kT, Dim(2)});
  AttrMap heads = {{"q_num_heads", Attribute(int64_t{4})},
                   {"kv_num_heads", Attribute(int64_t{2})}};
  NodeOptions delta;
  delta.name = "delta";
  b.output(b.add_node("LinearAttention", {lq, lk, lv, kNoValue, decay, beta},
                      heads, 1, delta)[0],
           "y_delta");
  AttrMap gated_attrs = heads;
  gated_attrs["update_rule"] = Attribute(std::string("gated"));
  NodeOptions gated;
  gated.name = "gated";
  b.output(b.add_node("LinearAttention", {lq, lk, lv, kNoValue, decay},
                      gated_attrs, 1, gated)[0],
           "y_gated");
  b.output(b.add("Add", {dt, dt}), "sum");
  Result<Graph> graph = std::move(b).build();
  EXPECT_TRUE(graph.is_ok()) << graph.status().to_string();
  return std::move(graph).value();
}

bool starts_with(const std::string& text, const std::string& prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

TEST(CudaKernelPlan, PrefillRunsChunkwiseWhereAFormExists) {
  Graph graph = sequence_graph();
  for (DeviceLimits limits : {DeviceLimits::sm80(), DeviceLimits::sm90()}) {
    auto plan = plan_cuda_kernels(graph, limits, {{"T", 512}});
    ASSERT_TRUE(plan.is_ok()) << plan.status().to_string();
    ASSERT_EQ(plan->size(), 4u);  // the Add has no tiling
    const KernelPlanEntry& retention = (*plan)[0];
    EXPECT_EQ(retention.node, "retention");
    EXPECT_TRUE(starts_with(retention.tiling, "chunkwise")) << retention.tiling;
    EXPECT_EQ(retention.state_place, "shared memory");
    EXPECT_TRUE(starts_with((*plan)[1].tiling, "chunkwise"))
        << (*plan)[1].tiling;
    // The delta rule has no chunkwise form: the recurrence, in registers.
    EXPECT_EQ((*plan)[2].node, "delta");
    EXPECT_TRUE(starts_with((*plan)[2].tiling, "column scan"))
        << (*plan)[2].tiling;
    EXPECT_EQ((*plan)[2].state_place, "registers");
    EXPECT_TRUE(starts_with((*plan)[3].tiling, "chunkwise"))
        << (*plan)[3].tiling;
    for (const KernelPlanEntry& entry : *plan) {
      EXPECT_GT(entry.shared_bytes, 0u) << entry.node;
      EXPECT_LE(entry.shared_bytes, entry.shared_limit) << entry.node;
      EXPECT_LE(entry.shared_limit, limits.shared_per_block_optin);
    }
  }
}

TEST(CudaKernelPlan, DecodeStepsRunTheRecurrence) {
  auto plan =
      plan_cuda_kernels(sequence_graph(), DeviceLimits::sm90(), {{"T", 1}});
  ASSERT_TRUE(plan.is_ok()) << plan.status().to_string();
  ASSERT_EQ(plan->size(), 4u);
  for (const KernelPlanEntry& entry : *plan) {
    EXPECT_TRUE(starts_with(entry.tiling, "column scan"))
        << entry.node << ": " << entry.tiling;
  }
}

TEST(CudaKernelPlan, UnboundDimIsNamed) {
  auto plan = plan_cuda_kernels(sequence_graph(), DeviceLimits::sm90(), {});
  ASSERT_FALSE(plan.is_ok());
  EXPECT_NE(plan.status().message().find("[Retention] node 'retention'"),
            std::string::npos)
      << plan.status().message();
  EXPECT_NE(plan.status().message().find("bind the symbolic dim 'T'"),
            std::string::npos)
      << plan.status().message();
}

// A SelectiveScan over (1, D, T): the plan needs D, G and N, not T.
Graph selective_scan_graph(Dim channels) {
  GraphBuilder b("scan");
  auto input = [&](const char* name, Shape shape) {
    return b.input(name, DType::kF32, std::move(shape));
  };
  ValueId u = input("u", Shape{Dim(1), channels, kT});
  ValueId a = input("A", Shape{channels, Dim(16)});
  ValueId bc = input("Bm", Shape{Dim(1), Dim(2), Dim(16), kT});
  NodeOptions options;
  options.domain = kSeqrtDomain;
  options.name = "scan";
  b.output(b.add_node("SelectiveScan", {u, u, a, bc, bc}, {}, 1, options)[0],
           "y");
  Result<Graph> graph = std::move(b).build();
  EXPECT_TRUE(graph.is_ok()) << graph.status().to_string();
  return std::move(graph).value();
}

TEST(CudaKernelPlan, SelectiveScanNeedsNoSequenceLength) {
  auto plan = plan_cuda_kernels(selective_scan_graph(Dim(64)),
                                DeviceLimits::sm90(), {});
  ASSERT_TRUE(plan.is_ok()) << plan.status().to_string();
  ASSERT_EQ(plan->size(), 1u);
  EXPECT_EQ((*plan)[0].node, "scan");
  EXPECT_TRUE(starts_with((*plan)[0].tiling, "SelectiveScan"))
      << (*plan)[0].tiling;
}

TEST(CudaKernelPlan, SelectiveScanNamesTheNodeOnce) {
  auto plan = plan_cuda_kernels(selective_scan_graph(Dim::symbol("D")),
                                DeviceLimits::sm90(), {});
  ASSERT_FALSE(plan.is_ok());
  const std::string message = plan.status().message();
  EXPECT_EQ(message.find("[SelectiveScan] node 'scan': bind the symbolic "
                         "dim 'D'"),
            0u)
      << message;
  // The op's own check, on the bound sizes.
  auto odd = plan_cuda_kernels(selective_scan_graph(Dim::symbol("D")),
                               DeviceLimits::sm90(), {{"D", 7}});
  ASSERT_FALSE(odd.is_ok());
  EXPECT_EQ(odd.status().message(),
            "[SelectiveScan] node 'scan': D = 7 must be a multiple of G = 2");
}

TEST(CudaKernelPlan, LinearAttentionFormChoice) {
  EXPECT_TRUE(linear_attention_chunkwise(false, false, 64));
  EXPECT_FALSE(linear_attention_chunkwise(true, false, 64));
  EXPECT_FALSE(linear_attention_chunkwise(false, true, 64));
  EXPECT_FALSE(linear_attention_chunkwise(false, false, 1));
}

// A Titans memory per head: NeuralMemory with W1 (H, d, m) and W2.
Graph neural_memory_graph(int64_t d, int64_t m, int64_t chunk) {
  GraphBuilder b("memory");
  NodeOptions options;
  options.domain = kSeqrtDomain;
  options.name = "memory";
  const Shape tokens{Dim(1), Dim(2), kT, Dim(d)};
  const Shape gates{Dim(1), Dim(2), kT};
  ValueId q = b.input("q", DType::kF32, tokens);
  ValueId g = b.input("g", DType::kF32, gates);
  ValueId w1 = b.input("W1", DType::kF32, Shape{Dim(2), Dim(d), Dim(m)});
  ValueId w2 = b.input("W2", DType::kF32, Shape{Dim(2), Dim(m), Dim(d)});
  b.output(b.add_node("NeuralMemory", {q, q, q, g, g, g, w1, w2},
                      {{"chunk_size", Attribute(chunk)}}, 1, options)[0],
           "y");
  Result<Graph> graph = std::move(b).build();
  EXPECT_TRUE(graph.is_ok()) << graph.status().to_string();
  return std::move(graph).value();
}

TEST(CudaKernelPlan, NeuralMemoryWeightsStayInSharedMemory) {
  auto plan = plan_cuda_kernels(neural_memory_graph(16, 64, 1),
                                DeviceLimits::sm90(), {{"T", 100}});
  ASSERT_TRUE(plan.is_ok()) << plan.status().to_string();
  ASSERT_EQ(plan->size(), 1u);
  const KernelPlanEntry& entry = (*plan)[0];
  EXPECT_EQ(entry.node, "memory");
  EXPECT_EQ(entry.state_place, "shared memory");
  EXPECT_TRUE(starts_with(entry.tiling, "NeuralMemory: 256 thread(s)/block"))
      << entry.tiling;
  EXPECT_NE(entry.tiling.find("momentum in registers (8/thread)"),
            std::string::npos)
      << entry.tiling;
  EXPECT_LE(entry.shared_bytes, entry.shared_limit);
  // m = 4d at d = 64: weights and momentum exceed 227 KiB, refused with
  // the node named.
  auto refused = plan_cuda_kernels(neural_memory_graph(64, 256, 1),
                                   DeviceLimits::sm90(), {{"T", 100}});
  ASSERT_FALSE(refused.is_ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(refused.status().message().find("node 'memory'"), std::string::npos)
      << refused.status().message();
  // The same refusal at compile time (supports), T unbound: the memory's
  // size does not depend on it.
  Graph big = neural_memory_graph(64, 256, 1);
  Status status = check_plannable(big, big.nodes[0], DeviceLimits::sm90());
  EXPECT_EQ(status.code(), StatusCode::kUnsupported);
  EXPECT_NE(status.message().find("[NeuralMemory]"), std::string::npos)
      << status.message();
  Graph small = neural_memory_graph(16, 64, 1);
  EXPECT_TRUE(
      check_plannable(small, small.nodes[0], DeviceLimits::sm90()).is_ok());
}

TEST(CudaKernelPlan, SymbolicDimsLeaveTheChoiceToTheRun) {
  // Retention's T is symbolic: nothing to refuse before the run.
  Graph graph = sequence_graph();
  EXPECT_TRUE(
      check_plannable(graph, graph.nodes[0], DeviceLimits::sm90()).is_ok());
}

}  // namespace
}  // namespace seqrt::cuda
