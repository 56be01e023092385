#include "compiler/partition/partition.h"

#include <gtest/gtest.h>

#include "compiler/infer/infer_graph.h"
#include "graph/builder.h"

namespace seqrt {
namespace {

// A device that refuses the ops in `refused`, and the host that takes all.
std::vector<PartitionTarget> device_then_host(std::set<std::string> refused) {
  PartitionTarget device{"dev",
                         [refused](const Graph&, const Node& node) {
                           if (refused.count(node.op)) {
                             return unsupported("no {} kernel", node.op);
                           }
                           return Status::ok();
                         },
                         false};
  PartitionTarget host{
      "host", [](const Graph&, const Node&) { return Status::ok(); }, true};
  return {device, host};
}

Graph typed(GraphBuilder&& b) {
  Result<Graph> graph = std::move(b).build();
  EXPECT_TRUE(graph.is_ok()) << graph.status().to_string();
  Graph g = std::move(graph).value();
  EXPECT_TRUE(infer_graph(g).is_ok());
  return g;
}

// x -> Relu -> Exp -> Neg -> (+ w) -> y, w a constant of 8 floats.
Graph chain() {
  GraphBuilder b("chain");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), 8});
  ValueId w = b.constant(
      "w", Tensor::from_vector<float>({8}, std::vector<float>(8, 0.5f)));
  ValueId r = b.add("Relu", {x});
  ValueId e = b.add("Exp", {r});
  ValueId n = b.add("Neg", {e});
  b.output(b.add("Add", {n, w}), "y");
  return typed(std::move(b));
}

std::vector<std::string> ops_of(const Graph& graph) {
  std::vector<std::string> ops;
  for (const Node& node : graph.nodes) ops.push_back(node.op);
  return ops;
}

std::vector<std::string> names(const Graph& graph,
                               const std::vector<ValueId>& ids) {
  std::vector<std::string> out;
  for (ValueId id : ids) out.push_back(graph.value(id).name);
  return out;
}

TEST(Partition, EveryNodeOnTheFirstTargetThatTakesIt) {
  Graph graph = chain();
  Result<Partition> p = partition_graph(graph, device_then_host({}));
  ASSERT_TRUE(p.is_ok()) << p.status().to_string();
  ASSERT_EQ(p->segments.size(), 1u);
  EXPECT_EQ(p->segments[0].target, 0);
  EXPECT_EQ(ops_of(p->segments[0].graph),
            (std::vector<std::string>{"Relu", "Exp", "Neg", "Add"}));
  // The weight is the segment's constant, not an input.
  EXPECT_EQ(names(p->segments[0].graph, p->segments[0].graph.inputs),
            (std::vector<std::string>{"x"}));
  EXPECT_EQ(p->segments[0].graph.constants.size(), 1u);
}

TEST(Partition, AHostIslandBetweenDeviceSegments) {
  Graph graph = chain();
  Result<Partition> p = partition_graph(graph, device_then_host({"Exp"}));
  ASSERT_TRUE(p.is_ok()) << p.status().to_string();
  ASSERT_EQ(p->segments.size(), 3u);
  EXPECT_EQ(p->segments[0].target, 0);
  EXPECT_EQ(p->segments[1].target, 1);
  EXPECT_EQ(p->segments[2].target, 0);
  EXPECT_EQ(ops_of(p->segments[1].graph), (std::vector<std::string>{"Exp"}));
  // Copies at the edges: Relu's output into the island, Exp's out of it.
  const Graph& island = p->segments[1].graph;
  EXPECT_EQ(names(island, island.inputs),
            names(p->segments[0].graph, p->segments[0].graph.outputs));
  EXPECT_EQ(names(island, island.outputs),
            names(p->segments[2].graph, p->segments[2].graph.inputs));
  EXPECT_EQ(p->why[1], "no Exp kernel");
  EXPECT_EQ(p->why[0], "");
  // The device segments move x and Relu's output, then Exp's output and y:
  // 4 crossings of (batch 2 x 8) floats. The weight never crosses.
  std::vector<std::string> unknown;
  EXPECT_EQ(
      crossing_bytes(*p, device_then_host({"Exp"}), {{"batch", 2}}, &unknown),
      4u * 64u);
  EXPECT_TRUE(unknown.empty());
  EXPECT_EQ(crossing_bytes(*p, device_then_host({"Exp"}), {}, &unknown), 0u);
  EXPECT_EQ(unknown.size(), 4u);
}

TEST(Partition, IndependentNodesOfOneTargetMerge) {
  // Two branches from x: Exp (host only) and Relu -> Neg (device); the
  // device's nodes form one segment although Exp sits between them in
  // the graph's order.
  GraphBuilder b("branches");
  ValueId x = b.input("x", DType::kF32, Shape{4});
  ValueId r = b.add("Relu", {x});
  ValueId e = b.add("Exp", {x});
  ValueId n = b.add("Neg", {r});
  b.output(n, "a");
  b.output(e, "b");
  Graph graph = typed(std::move(b));
  Result<Partition> p = partition_graph(graph, device_then_host({"Exp"}));
  ASSERT_TRUE(p.is_ok()) << p.status().to_string();
  ASSERT_EQ(p->segments.size(), 2u);
  EXPECT_EQ(ops_of(p->segments[0].graph),
            (std::vector<std::string>{"Relu", "Neg"}));
  EXPECT_EQ(ops_of(p->segments[1].graph), (std::vector<std::string>{"Exp"}));
}

TEST(Partition, ANodeNoTargetTakesIsAnError) {
  Graph graph = chain();
  std::vector<PartitionTarget> targets = device_then_host({"Exp"});
  targets.pop_back();
  Result<Partition> p = partition_graph(graph, targets);
  ASSERT_FALSE(p.is_ok());
  EXPECT_NE(p.status().message().find("no Exp kernel"), std::string::npos)
      << p.status().message();
  EXPECT_NE(p.status().message().find("[Exp]"), std::string::npos)
      << p.status().message();
}

TEST(Partition, NoTargetsIsAnError) {
  Result<Partition> p = partition_graph(chain(), {});
  ASSERT_FALSE(p.is_ok());
  EXPECT_NE(p.status().message().find("no backend"), std::string::npos);
}

TEST(Partition, AValueTwoSegmentsReadLeavesItsSegmentOnce) {
  // Relu's output is read by Exp (host) and Neg (device, same segment as
  // Relu); it is an output of the first segment exactly once.
  GraphBuilder b("fan");
  ValueId x = b.input("x", DType::kF32, Shape{4});
  ValueId r = b.add("Relu", {x});
  ValueId e = b.add("Exp", {r});
  ValueId n = b.add("Neg", {r});
  b.output(b.add("Add", {e, n}), "y");
  Graph graph = typed(std::move(b));
  Result<Partition> p = partition_graph(graph, device_then_host({"Exp"}));
  ASSERT_TRUE(p.is_ok()) << p.status().to_string();
  ASSERT_EQ(p->segments.size(), 3u);
  const Graph& first = p->segments[0].graph;
  EXPECT_EQ(ops_of(first), (std::vector<std::string>{"Relu", "Neg"}));
  EXPECT_EQ(first.outputs.size(), 2u);  // Relu's for Exp, Neg's for Add
}

}  // namespace
}  // namespace seqrt
