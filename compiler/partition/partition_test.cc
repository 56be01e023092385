#include "compiler/partition/partition.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "compiler/infer/infer_graph.h"
#include "compiler/partition/light_islands.h"
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

// x -> MatMul(m) -> Exp -> MatMul(m) -> (+ w) -> y, m an 8x8 and w an 8
// constant; the matmuls are worth a trip to a device.
Graph chain() {
  GraphBuilder b("chain");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), 8});
  ValueId m = b.constant(
      "m", Tensor::from_vector<float>({8, 8}, std::vector<float>(64, 0.1f)));
  ValueId w = b.constant(
      "w", Tensor::from_vector<float>({8}, std::vector<float>(8, 0.5f)));
  ValueId r = b.add("MatMul", {x, m});
  ValueId e = b.add("Exp", {r});
  ValueId n = b.add("MatMul", {e, m});
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
            (std::vector<std::string>{"MatMul", "Exp", "MatMul", "Add"}));
  // The weights are the segment's constants, not inputs.
  EXPECT_EQ(names(p->segments[0].graph, p->segments[0].graph.inputs),
            (std::vector<std::string>{"x"}));
  EXPECT_EQ(p->segments[0].graph.constants.size(), 2u);
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
  // Copies at the edges: the first MatMul's output into the island, Exp's
  // out of it.
  const Graph& island = p->segments[1].graph;
  EXPECT_EQ(names(island, island.inputs),
            names(p->segments[0].graph, p->segments[0].graph.outputs));
  EXPECT_EQ(names(island, island.outputs),
            names(p->segments[2].graph, p->segments[2].graph.inputs));
  EXPECT_EQ(p->why[1], "no Exp kernel");
  EXPECT_EQ(p->why[0], "");
  // The device segments move x and the first MatMul's output, then Exp's
  // output and y: 4 crossings of (batch 2 x 8) floats. The weights never
  // cross.
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

// past -> (op_on_past) -> + MatMul(Exp(x), m) -> present,
// y = Neg(present): a state pair whose input `op_on_past` reads (Exp: host
// only; Tanh: device).
Graph state_graph(const std::string& op_on_past) {
  GraphBuilder b("state");
  ValueId x = b.input("x", DType::kF32, Shape{4});
  ValueId past = b.input("past", DType::kF32, Shape{4});
  ValueId m = b.constant(
      "m", Tensor::from_vector<float>({4, 4}, std::vector<float>(16, 0.25f)));
  ValueId exp = b.add("Exp", {x});  // first, so the host segment runs first
  ValueId mixed = b.add("MatMul", {exp, m});
  ValueId present = b.add("Add", {b.add(op_on_past, {past}), mixed});
  b.output(b.add("Neg", {present}), "y");
  b.output(present, "present");
  b.state_pair(past, present);
  return typed(std::move(b));
}

TEST(Partition, AStateOneDeviceSegmentReadsAndWritesIsHeldThere) {
  // Exp(x) on the host, then the rest on the device: the device segment
  // alone reads past and writes present.
  Graph graph = state_graph("Tanh");
  const std::vector<PartitionTarget> targets = device_then_host({"Exp"});
  Result<Partition> p = partition_graph(graph, targets);
  ASSERT_TRUE(p.is_ok()) << p.status().to_string();
  ASSERT_EQ(p->segments.size(), 2u);
  const Segment& device = p->segments[1];
  EXPECT_EQ(device.target, 0);
  EXPECT_EQ(device.held_states, (std::vector<int>{0}));
  ASSERT_EQ(device.graph.state_pairs.size(), 1u);
  EXPECT_EQ(device.graph.value(device.graph.state_pairs[0].input).name, "past");
  EXPECT_EQ(device.graph.value(device.graph.state_pairs[0].output).name,
            "present");
  EXPECT_TRUE(p->segments[0].held_states.empty());
  // Per step only Exp's output goes in and y comes out (4 floats each).
  EXPECT_EQ(crossing_bytes(*p, targets, {}), 2u * 16u);
}

TEST(Partition, AStateAHostSegmentReadsIsNotHeld) {
  // Exp(past) on the host: the state crosses every step as a tensor.
  Graph graph = state_graph("Exp");
  const std::vector<PartitionTarget> targets = device_then_host({"Exp"});
  Result<Partition> p = partition_graph(graph, targets);
  ASSERT_TRUE(p.is_ok()) << p.status().to_string();
  for (const Segment& segment : p->segments) {
    EXPECT_TRUE(segment.held_states.empty());
    EXPECT_TRUE(segment.graph.state_pairs.empty());
  }
}

TEST(Partition, AStateOnTheHostIsNotHeld) {
  // Everything on the host (the device refuses Add): nothing to hold.
  Graph graph = state_graph("Tanh");
  Result<Partition> p = partition_graph(graph, device_then_host({"Add"}));
  ASSERT_TRUE(p.is_ok()) << p.status().to_string();
  for (const Segment& segment : p->segments) {
    EXPECT_TRUE(segment.held_states.empty());
  }
}

TEST(Partition, ALightDeviceIslandBetweenHostSegmentsMovesToTheHost) {
  // x -> Relu -> Exp (host only) -> Neg -> y: Relu and Neg alone on the
  // device would each cost a round trip for one pass over 8 floats.
  GraphBuilder b("light");
  ValueId x = b.input("x", DType::kF32, Shape{8});
  b.output(b.add("Neg", {b.add("Exp", {b.add("Relu", {x})})}), "y");
  Graph graph = typed(std::move(b));
  Result<Partition> p = partition_graph(graph, device_then_host({"Exp"}));
  ASSERT_TRUE(p.is_ok()) << p.status().to_string();
  ASSERT_EQ(p->segments.size(), 1u);
  EXPECT_EQ(p->segments[0].target, 1);
  EXPECT_NE(p->why[0].find("moved to host"), std::string::npos) << p->why[0];
  EXPECT_NE(p->why[2].find("only light ops"), std::string::npos) << p->why[2];
  EXPECT_EQ(p->why[1], "no Exp kernel");
}

TEST(Partition, HeavyOpsAreWorthTheTrip) {
  Node matmul, relu, scan;
  matmul.op = "MatMul";
  relu.op = "Relu";
  scan.domain = kSeqrtDomain;
  scan.op = "SelectiveScan";
  EXPECT_TRUE(is_heavy_op(matmul));
  EXPECT_FALSE(is_heavy_op(relu));
  EXPECT_TRUE(is_heavy_op(scan));
}

// A device like Vulkan for host parameters: it reads the parameter inputs
// of Reshape, Slice and CumSum on the host, so it refuses them computed
// inside its graph and takes them as graph inputs; the host refuses the
// ops in `host_refused`.
std::vector<PartitionTarget> device_with_host_parameters(
    std::set<std::string> host_refused = {}) {
  auto parameters = [](const Graph&, const Node& node) {
    if (node.op == "Reshape" || node.op == "CumSum") {
      return std::vector<size_t>{1};
    }
    if (node.op == "Slice") return std::vector<size_t>{1, 2, 3, 4};
    return std::vector<size_t>{};
  };
  PartitionTarget device{
      "dev",
      [parameters](const Graph& graph, const Node& node) {
        const std::vector<int> producers = graph.producers();
        for (size_t i : parameters(graph, node)) {
          if (i < node.inputs.size() && node.inputs[i] != kNoValue &&
              producers[node.inputs[i]] >= 0) {
            return unsupported("{}: parameter computed on the device",
                               node.label());
          }
        }
        return Status::ok();
      },
      false, parameters};
  PartitionTarget host{"host",
                       [host_refused](const Graph&, const Node& node) {
                         if (host_refused.count(node.op)) {
                           return unsupported("no {} kernel", node.op);
                         }
                         return Status::ok();
                       },
                       true};
  return {device, host};
}

bool contains(const std::vector<std::string>& all, const std::string& one) {
  return std::find(all.begin(), all.end(), one) != all.end();
}

// The index of the first node running `op`.
int node_of(const Graph& graph, const std::string& op) {
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    if (graph.nodes[n].op == op) return static_cast<int>(n);
  }
  return -1;
}

// `op` reads parameter `param` made from data by an Add, then a MatMul
// (worth the device) takes its output: the Add runs on the host and the
// parameter crosses into the device segment as an input.
void expect_parameter_made_on_the_host(const Graph& graph,
                                       const std::string& op,
                                       const std::string& param) {
  Result<Partition> p = partition_graph(graph, device_with_host_parameters());
  ASSERT_TRUE(p.is_ok()) << p.status().to_string();
  const int add = node_of(graph, "Add");
  const int reader = node_of(graph, op);
  EXPECT_EQ(p->node_target[add], 1);
  EXPECT_EQ(p->node_target[reader], 0);
  EXPECT_EQ(p->node_target[node_of(graph, "MatMul")], 0);
  EXPECT_NE(p->why[add].find("parameter"), std::string::npos) << p->why[add];
  const Segment* device = nullptr;
  for (const Segment& segment : p->segments) {
    if (segment.target == 0) device = &segment;
  }
  ASSERT_NE(device, nullptr);
  EXPECT_TRUE(contains(names(device->graph, device->graph.inputs), param));
  EXPECT_EQ(device->host_parameters, (std::vector<std::string>{param}));
  // The parameter's 16 bytes (or 8) are among those crossing per run.
  const uint64_t bytes = crossing_bytes(*p, device_with_host_parameters(), {});
  EXPECT_GT(bytes, 0u);
}

TEST(Partition, AReshapeShapeMadeFromDataRunsOnTheDeviceFromTheHost) {
  GraphBuilder b("reshape_param");
  ValueId x = b.input("x", DType::kF32, Shape{2, 6});
  ValueId s = b.input("s", DType::kI64, Shape{2});
  ValueId zero = b.constant("zero", Tensor::from_vector<int64_t>({2}, {0, 0}));
  ValueId shape =
      b.add("Add", {s, zero}, {}, NodeOptions{"", kOnnxDomain, {"shape"}});
  ValueId m = b.constant(
      "m", Tensor::from_vector<float>({2, 2}, std::vector<float>(4, 0.5f)));
  b.output(b.add("MatMul", {b.add("Reshape", {x, shape}), m}), "y");
  expect_parameter_made_on_the_host(typed(std::move(b)), "Reshape", "shape");
}

TEST(Partition, ASliceEndMadeFromDataRunsOnTheDeviceFromTheHost) {
  GraphBuilder b("slice_param");
  ValueId x = b.input("x", DType::kF32, Shape{4, 4});
  ValueId n = b.input("n", DType::kI64, Shape{1});
  ValueId one = b.constant("one", Tensor::from_vector<int64_t>({1}, {1}));
  ValueId starts = b.constant("starts", Tensor::from_vector<int64_t>({1}, {0}));
  ValueId ends =
      b.add("Add", {n, one}, {}, NodeOptions{"", kOnnxDomain, {"ends"}});
  ValueId m = b.constant(
      "m", Tensor::from_vector<float>({4, 4}, std::vector<float>(16, 0.5f)));
  b.output(b.add("MatMul", {b.add("Slice", {x, starts, ends}), m}), "y");
  expect_parameter_made_on_the_host(typed(std::move(b)), "Slice", "ends");
}

TEST(Partition, ACumSumAxisMadeFromDataRunsOnTheDeviceFromTheHost) {
  GraphBuilder b("cumsum_param");
  ValueId x = b.input("x", DType::kF32, Shape{4, 4});
  ValueId a = b.input("a", DType::kI64, Shape{});
  ValueId zero = b.constant("zero", Tensor::scalar<int64_t>(0));
  ValueId axis =
      b.add("Add", {a, zero}, {}, NodeOptions{"", kOnnxDomain, {"axis"}});
  ValueId m = b.constant(
      "m", Tensor::from_vector<float>({4, 4}, std::vector<float>(16, 0.5f)));
  b.output(b.add("MatMul", {b.add("CumSum", {x, axis}), m}), "y");
  expect_parameter_made_on_the_host(typed(std::move(b)), "CumSum", "axis");
}

TEST(Partition, AParameterOnlyTheDeviceMakesStaysRefused) {
  // shape = ArgMax(t), which the host cannot run: reading it before the
  // device records would need a read-back mid-recording, so the Reshape
  // goes to the host instead.
  GraphBuilder b("device_param");
  ValueId x = b.input("x", DType::kF32, Shape{2, 6});
  ValueId t = b.input("t", DType::kF32, Shape{2, 5});
  ValueId shape =
      b.add("ArgMax", {t}, {{"axis", int64_t{0}}, {"keepdims", int64_t{0}}});
  ValueId m = b.constant(
      "m", Tensor::from_vector<float>({2, 2}, std::vector<float>(4, 0.5f)));
  b.output(b.add("MatMul", {b.add("Reshape", {x, shape}), m}), "y");
  Graph graph = typed(std::move(b));
  Result<Partition> p =
      partition_graph(graph, device_with_host_parameters({"ArgMax"}));
  ASSERT_TRUE(p.is_ok()) << p.status().to_string();
  const int reshape = node_of(graph, "Reshape");
  EXPECT_EQ(p->node_target[node_of(graph, "ArgMax")], 0);
  EXPECT_EQ(p->node_target[reshape], 1);
  EXPECT_NE(p->why[reshape].find("made on the device"), std::string::npos)
      << p->why[reshape];
}

}  // namespace
}  // namespace seqrt
