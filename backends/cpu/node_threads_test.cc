// Small nodes run on one thread, large ones (by their inputs or by outputs
// the graph fixes) on the team, and nodes with subgraphs as they are.
#include "backends/cpu/node_threads.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <memory>
#include <vector>

#include "backends/cpu/parallel.h"
#include "graph/builder.h"
#include "ops/registry.h"

namespace seqrt::cpu {
namespace {

Graph relu_graph(int64_t n) {
  GraphBuilder b("relu");
  ValueId x = b.input("x", DType::kF32, {n});
  b.output(b.add("Relu", {x}), "y");
  return std::move(b).build().value();
}

// The thread count the wrapped kernel saw when run on `n` floats.
int threads_seen(const Graph& graph, int64_t n) {
  const Node& node = graph.nodes[0];
  const OpSchema* schema = OpRegistry::global().find(kOnnxDomain, node.op);
  EXPECT_NE(schema, nullptr);
  int seen = 0;
  KernelFn wrapped = with_node_threads(graph, node, [&](KernelContext&) {
    seen = omp_get_max_threads();
    return Status::ok();
  });
  std::vector<float> data(static_cast<size_t>(n), 1.0f);
  Tensor x = Tensor::from_vector({n}, data);
  KernelContext ctx(node, *schema, {&x});
  ScopedThreads team(2);
  EXPECT_TRUE(wrapped(ctx).is_ok());
  EXPECT_EQ(omp_get_max_threads(), 2) << "the team's count is restored";
  return seen;
}

TEST(NodeThreads, SmallNodesRunOnOneThread) {
  EXPECT_EQ(threads_seen(relu_graph(64), 64), 1);
}

TEST(NodeThreads, NodesWithLargeInputsKeepTheTeam) {
  const int64_t n = parallel_node_bytes() / sizeof(float);
  EXPECT_EQ(threads_seen(relu_graph(n), n), 2);
}

TEST(NodeThreads, NodesWithLargeFixedOutputsKeepTheTeam) {
  Graph graph = relu_graph(64);
  Value& y = graph.values[graph.nodes[0].outputs[0]];
  y.dtype = DType::kF32;
  y.shape = Shape::from_dims({static_cast<int64_t>(parallel_node_bytes())});
  EXPECT_EQ(threads_seen(graph, 64), 2);
}

TEST(NodeThreads, NodesThatRunSubgraphsKeepTheTeam) {
  Graph graph = relu_graph(64);
  graph.nodes[0].attrs["body"] = Attribute(std::make_shared<Graph>());
  EXPECT_EQ(threads_seen(graph, 64), 2);
}

TEST(NodeThreads, SleepingTeamsRaiseTheThreshold) {
  EXPECT_EQ(parallel_node_bytes_for(nullptr), kParallelNodeBytes);
  EXPECT_EQ(parallel_node_bytes_for("ACTIVE"), kParallelNodeBytes);
  EXPECT_EQ(parallel_node_bytes_for("passive"), kParallelNodeBytesPassive);
  EXPECT_EQ(parallel_node_bytes_for("PASSIVE"), kParallelNodeBytesPassive);
}

}  // namespace
}  // namespace seqrt::cpu
