#include "graph/limits.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace seqrt {
namespace {

std::string message_of(const Status& status) {
  EXPECT_FALSE(status.is_ok());
  EXPECT_EQ(status.code(), StatusCode::kLimitExceeded) << status.message();
  return status.message();
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// A graph of `nodes` Identity nodes on one input; nested `depth` levels
// deep through a graph attribute of its first node. Not verified: the
// limits are counted on any structure.
Graph chain(int nodes, int depth) {
  Graph graph;
  graph.name = "chain";
  ValueId last = graph.add_value({"x", DType::kF32, Shape{4}});
  graph.inputs.push_back(last);
  for (int i = 0; i < nodes; ++i) {
    ValueId next =
        graph.add_value({"v" + std::to_string(i), DType::kF32, Shape{4}});
    Node node;
    node.op = "Identity";
    node.inputs = {last};
    node.outputs = {next};
    if (i == 0 && depth > 0) {
      node.attrs["body"] =
          Attribute(std::make_shared<Graph>(chain(1, depth - 1)));
    }
    graph.nodes.push_back(std::move(node));
    last = next;
  }
  graph.outputs.push_back(last);
  return graph;
}

TEST(Limits, TensorBytesNameTheTensorTheLimitAndHowToRaiseIt) {
  Limits limits;
  limits.max_tensor_bytes = int64_t{4} << 30;
  std::string message = message_of(check_tensor_limits(
      "model.onnx: tensor 'w'", DType::kF32, {3, 1024, 1024, 1024}, limits));
  EXPECT_EQ(message,
            "model.onnx: tensor 'w' needs 12.0 GiB, above max_tensor_bytes "
            "(4.0 GiB); raise it with --max-tensor-bytes / "
            "SessionOptions::limits");
  EXPECT_TRUE(check_tensor_limits("t", DType::kF32, {1024, 1024, 1024}, limits)
                  .is_ok());
}

TEST(Limits, ElementCountIsBoundedBeforeBytesAndNeverOverflows) {
  Limits limits;
  limits.max_tensor_elements = 100;
  EXPECT_TRUE(contains(
      message_of(check_tensor_limits("t", DType::kU8, {10, 11}, limits)),
      "t of shape (10,11) needs 110 elements, above max_tensor_elements (100 "
      "elements); raise it with --max-tensor-elements"));
  // Dims whose product overflows int64 are refused by the shape bound.
  Status huge = check_tensor_limits(
      "t", DType::kF64, {int64_t{1} << 40, int64_t{1} << 40}, Limits{});
  EXPECT_EQ(huge.code(), StatusCode::kLimitExceeded);
  EXPECT_TRUE(contains(huge.message(), "2^48"));
}

TEST(Limits, NodeCountCountsSubgraphs) {
  Limits limits;
  limits.max_nodes = 5;
  EXPECT_TRUE(check_graph_limits(chain(5, 0), limits, "g").is_ok());
  // 4 nodes plus 2 nested levels of one node each.
  EXPECT_TRUE(check_graph_limits(chain(4, 1), limits, "g").is_ok());
  EXPECT_TRUE(contains(
      message_of(check_graph_limits(chain(4, 2), limits, "g")),
      "g: the graph needs 6 nodes, above max_nodes (5 nodes); raise it with "
      "--max-nodes"));
}

TEST(Limits, SubgraphDepthHasADefaultThatCanBeRaised) {
  Limits limits;
  EXPECT_TRUE(check_graph_limits(chain(1, 16), limits, "g").is_ok());
  EXPECT_TRUE(contains(
      message_of(check_graph_limits(chain(1, 17), limits, "g")),
      "g: the graph needs 17 subgraph levels, above max_subgraph_depth (16 "
      "subgraph levels); raise it with "
      "--max-subgraph-depth"));
  ASSERT_TRUE(set_limit(limits, LimitKind::kMaxSubgraphDepth, 20).is_ok());
  EXPECT_TRUE(check_graph_limits(chain(1, 17), limits, "g").is_ok());
}

TEST(Limits, ConstantsAndFixedValuesAreChecked) {
  Graph graph = chain(1, 0);
  Limits limits;
  limits.max_tensor_bytes = 15;
  // x and v0 are (4) f32: 16 bytes each.
  EXPECT_TRUE(
      contains(message_of(check_graph_limits(graph, limits, "model.seqrt")),
               "model.seqrt: tensor 'x' needs 16 B, above max_tensor_bytes "
               "(15 B)"));
  limits.max_tensor_bytes = 16;
  ValueId w = graph.add_value({"w", DType::kF32, Shape{8}});
  graph.constants[w] = Tensor::allocate(DType::kF32, {8}).value();
  EXPECT_TRUE(
      contains(message_of(check_graph_limits(graph, limits, "model.seqrt")),
               "tensor 'w' needs 32 B"));
}

TEST(Limits, SetLimitChecksRanges) {
  Limits limits;
  EXPECT_TRUE(set_limit(limits, LimitKind::kMaxTensorBytes, 1 << 20).is_ok());
  EXPECT_EQ(limits.max_tensor_bytes, 1 << 20);
  EXPECT_TRUE(set_limit(limits, LimitKind::kMaxNodes, 7).is_ok());
  EXPECT_EQ(limits.max_nodes, 7);
  EXPECT_TRUE(set_limit(limits, LimitKind::kMemoryBudgetBytes, 0).is_ok());
  EXPECT_FALSE(set_limit(limits, LimitKind::kMaxNodes, 0).is_ok());
  EXPECT_FALSE(set_limit(limits, LimitKind::kMemoryBudgetBytes, -1).is_ok());
  EXPECT_FALSE(
      set_limit(limits, LimitKind::kMaxTensorElements, kMaxElements + 1)
          .is_ok());
  EXPECT_FALSE(
      set_limit(limits, LimitKind::kMaxSubgraphDepth, kMaxSubgraphDepth + 1)
          .is_ok());
  EXPECT_EQ(limits.max_loop_iterations, int64_t{1} << 31);
  EXPECT_TRUE(set_limit(limits, LimitKind::kMaxLoopIterations, 9).is_ok());
  EXPECT_EQ(limits.max_loop_iterations, 9);
  EXPECT_FALSE(set_limit(limits, LimitKind::kMaxLoopIterations, 0).is_ok());
  EXPECT_EQ(limits.run_timeout_ms, 0);
  EXPECT_TRUE(set_limit(limits, LimitKind::kRunTimeoutMs, 2000).is_ok());
  EXPECT_EQ(limits.run_timeout_ms, 2000);
  EXPECT_TRUE(set_limit(limits, LimitKind::kRunTimeoutMs, 0).is_ok());
  EXPECT_FALSE(set_limit(limits, LimitKind::kRunTimeoutMs, -1).is_ok());
  EXPECT_STREQ(limit_flag(LimitKind::kMaxLoopIterations),
               "--max-loop-iterations");
  EXPECT_STREQ(limit_flag(LimitKind::kRunTimeoutMs), "--timeout");
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(int64_t{3} << 29), "1.5 GiB");
}

}  // namespace
}  // namespace seqrt
