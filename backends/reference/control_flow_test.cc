// The control-flow ops (If, Scan, Loop) run through the reference graph
// runner, which gives their kernels a subgraph runner with the enclosing
// scope; infer_graph types their subgraphs first.
#include <gtest/gtest.h>

#include <memory>

#include "backends/reference/reference_backend.h"
#include "compiler/infer/infer_graph.h"
#include "graph/builder.h"

namespace seqrt {
namespace {

std::shared_ptr<Graph> subgraph(GraphBuilder builder) {
  Result<Graph> graph = std::move(builder).build();
  EXPECT_TRUE(graph.is_ok()) << graph.status().to_string();
  return graph.is_ok() ? std::make_shared<Graph>(std::move(graph).value())
                       : nullptr;
}

// Builds, types and returns the graph (empty on failure, with a test
// failure).
Graph typed(GraphBuilder builder) {
  Result<Graph> graph = std::move(builder).build();
  EXPECT_TRUE(graph.is_ok()) << graph.status().to_string();
  if (!graph.is_ok()) return Graph();
  Status status = infer_graph(*graph);
  EXPECT_TRUE(status.is_ok()) << status.to_string();
  return std::move(graph).value();
}

std::vector<double> values(const Tensor& tensor) {
  std::vector<double> out;
  for (int64_t i = 0; i < tensor.num_elements(); ++i) {
    out.push_back(tensor.element_f64(i));
  }
  return out;
}

Tensor f32(std::vector<int64_t> dims, std::vector<float> data) {
  return Tensor::from_vector<float>(std::move(dims), data);
}

// y = cond ? -x : x * 2, the branches reading x from the main graph. The
// then branch declares no type for its capture: inference takes x's.
Graph if_graph() {
  GraphBuilder then_b("then");
  ValueId x_then = then_b.capture("x", DType::kUndefined, std::nullopt);
  then_b.output(then_b.add("Neg", {x_then}), "neg");
  GraphBuilder else_b("else");
  ValueId x_else = else_b.capture("x", DType::kF32, Shape{3});
  ValueId two = else_b.constant("two", Tensor::scalar<float>(2));
  else_b.output(else_b.add("Mul", {x_else, two}), "twice");

  GraphBuilder b("if");
  ValueId cond = b.input("cond", DType::kBool, Shape{});
  b.input("x", DType::kF32, Shape{3});
  b.output(b.add("If", {cond},
                 {{"then_branch", subgraph(std::move(then_b))},
                  {"else_branch", subgraph(std::move(else_b))}}),
           "y");
  return typed(std::move(b));
}

TEST(ControlFlow, IfPicksEachBranchAndCapturesOuterValues) {
  Graph graph = if_graph();
  const Value& y = graph.value(graph.outputs[0]);
  EXPECT_EQ(y.dtype, DType::kF32);
  EXPECT_EQ(*y.shape, Shape({3}));
  Tensor x = f32({3}, {1, -2, 3});
  auto taken = run_reference_graph(graph, {Tensor::scalar<bool>(true), x});
  ASSERT_TRUE(taken.is_ok()) << taken.status().to_string();
  EXPECT_EQ(values((*taken)[0]), (std::vector<double>{-1, 2, -3}));
  auto not_taken = run_reference_graph(graph, {Tensor::scalar<bool>(false), x});
  ASSERT_TRUE(not_taken.is_ok()) << not_taken.status().to_string();
  EXPECT_EQ(values((*not_taken)[0]), (std::vector<double>{2, -4, 6}));
}

// Scan with one state (a running sum) and one scan output (the running sum
// after each step).
Graph cumsum_scan(AttrMap extra, Shape state_shape, Shape x_shape) {
  GraphBuilder body("body");
  ValueId s = body.input("s", DType::kF32, state_shape);
  ValueId x = body.input("x_t", DType::kF32, state_shape);
  ValueId sum = body.add("Add", {s, x});
  body.output(sum, "s_next");
  body.output(body.add("Identity", {sum}), "sum_t");

  GraphBuilder b("scan");
  ValueId init = b.input("init", DType::kF32, state_shape);
  ValueId xs = b.input("xs", DType::kF32, x_shape);
  extra["body"] = subgraph(std::move(body));
  extra["num_scan_inputs"] = 1;
  std::vector<ValueId> outs = b.add_node("Scan", {init, xs}, extra, 2);
  b.output(outs[0], "final");
  b.output(outs[1], "sums");
  return typed(std::move(b));
}

TEST(ControlFlow, ScanComputesACumulativeSum) {
  Graph graph = cumsum_scan({}, Shape{2}, Shape{Dim::symbol("seq"), 2});
  EXPECT_EQ(*graph.value(graph.outputs[1]).shape,
            Shape({Dim::symbol("seq"), 2}));
  Tensor xs = f32({4, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  auto out = run_reference_graph(graph, {f32({2}, {0, 0}), xs});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ(values((*out)[0]), (std::vector<double>{12, 16}));
  EXPECT_EQ((*out)[1].dims(), (std::vector<int64_t>{4, 2}));
  EXPECT_EQ(values((*out)[1]), (std::vector<double>{0, 1, 2, 4, 6, 9, 12, 16}));
  // An empty sequence leaves the state and gives an empty stack.
  auto empty = run_reference_graph(
      graph, {f32({2}, {3, 4}), Tensor::allocate(DType::kF32, {0, 2}).value()});
  ASSERT_TRUE(empty.is_ok()) << empty.status().to_string();
  EXPECT_EQ(values((*empty)[0]), (std::vector<double>{3, 4}));
  EXPECT_EQ((*empty)[1].dims(), (std::vector<int64_t>{0, 2}));
}

TEST(ControlFlow, ScanReverseAlongAxis1) {
  // Columns of xs are read last to first: (2,5), (1,4), (0,3).
  Graph graph = cumsum_scan({{"scan_input_axes", std::vector<int64_t>{1}},
                             {"scan_input_directions", std::vector<int64_t>{1}},
                             {"scan_output_axes", std::vector<int64_t>{1}}},
                            Shape{2}, Shape{2, 3});
  Tensor xs = f32({2, 3}, {0, 1, 2, 3, 4, 5});
  auto out = run_reference_graph(graph, {f32({2}, {0, 0}), xs});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ(values((*out)[0]), (std::vector<double>{3, 12}));
  EXPECT_EQ((*out)[1].dims(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(values((*out)[1]), (std::vector<double>{2, 3, 3, 5, 9, 12}));
}

TEST(ControlFlow, ScanReverseOutputDirection) {
  Graph graph = cumsum_scan(
      {{"scan_output_directions", std::vector<int64_t>{1}}}, Shape{}, Shape{3});
  auto out = run_reference_graph(
      graph, {Tensor::scalar<float>(0), f32({3}, {1, 2, 3})});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ(values((*out)[1]), (std::vector<double>{6, 3, 1}));
}

// Loop over v with body (i, cond, v) -> (i < limit, v + v, v + v), limit
// captured from the main graph.
Graph doubling_loop(bool with_trip_count, bool with_cond) {
  GraphBuilder body("body");
  ValueId i = body.input("i", DType::kI64, Shape{});
  body.input("cond_in", DType::kBool, Shape{});
  ValueId v = body.input("v", DType::kF32, Shape{2});
  ValueId limit = body.capture("limit", DType::kI64, Shape{});
  body.output(body.add("Less", {i, limit}), "cond_out");
  ValueId doubled = body.add("Add", {v, v});
  body.output(doubled, "v_next");
  body.output(body.add("Identity", {doubled}), "v_t");

  GraphBuilder b("loop");
  ValueId m = with_trip_count ? b.input("m", DType::kI64, Shape{}) : kNoValue;
  ValueId cond = with_cond ? b.input("cond", DType::kBool, Shape{}) : kNoValue;
  ValueId v0 = b.input("v0", DType::kF32, Shape{2});
  b.input("limit", DType::kI64, Shape{});
  std::vector<ValueId> outs = b.add_node(
      "Loop", {m, cond, v0}, {{"body", subgraph(std::move(body))}}, 2);
  b.output(outs[0], "v_final");
  b.output(outs[1], "v_all");
  return typed(std::move(b));
}

TEST(ControlFlow, LoopRunsItsTripCountWithScanOutputs) {
  Graph graph = doubling_loop(true, false);
  EXPECT_EQ(*graph.value(graph.outputs[1]).shape, Shape({Dim::unknown(), 2}));
  auto out =
      run_reference_graph(graph, {Tensor::scalar<int64_t>(3), f32({2}, {1, 2}),
                                  Tensor::scalar<int64_t>(100)});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ(values((*out)[0]), (std::vector<double>{8, 16}));
  EXPECT_EQ((*out)[1].dims(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(values((*out)[1]), (std::vector<double>{2, 4, 4, 8, 8, 16}));
}

TEST(ControlFlow, LoopStopsWhenTheBodyCondTurnsFalse) {
  // Iterations 0, 1, 2 run; the third gives cond = (2 < 2) = false.
  Graph graph = doubling_loop(true, true);
  auto out = run_reference_graph(
      graph, {Tensor::scalar<int64_t>(10), Tensor::scalar<bool>(true),
              f32({2}, {1, 1}), Tensor::scalar<int64_t>(2)});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ(values((*out)[0]), (std::vector<double>{8, 8}));
  EXPECT_EQ((*out)[1].dims(), (std::vector<int64_t>{3, 2}));
}

TEST(ControlFlow, LoopWithoutTripCountRunsWhileCondHolds) {
  Graph graph = doubling_loop(false, true);
  auto out =
      run_reference_graph(graph, {Tensor::scalar<bool>(true), f32({2}, {1, 3}),
                                  Tensor::scalar<int64_t>(0)});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ(values((*out)[0]), (std::vector<double>{2, 6}));
  auto never =
      run_reference_graph(graph, {Tensor::scalar<bool>(false), f32({2}, {1, 3}),
                                  Tensor::scalar<int64_t>(0)});
  ASSERT_TRUE(never.is_ok()) << never.status().to_string();
  EXPECT_EQ(values((*never)[0]), (std::vector<double>{1, 3}));
  // No iteration: the stacked output takes the body's declared (2).
  EXPECT_EQ((*never)[1].dims(), (std::vector<int64_t>{0, 2}));
}

// A carried value that grows by one element per iteration, also given as
// a scan output: the carried value may change shape, the scan output not.
Graph growing_loop() {
  GraphBuilder body("body");
  body.input("i", DType::kI64, Shape{});
  ValueId cond = body.input("cond_in", DType::kBool, Shape{});
  ValueId v = body.input("v", DType::kF32, Shape{Dim::unknown()});
  ValueId one = body.constant("one", f32({1}, {1}));
  ValueId grown = body.add("Concat", {v, one}, {{"axis", 0}});
  body.output(body.add("Identity", {cond}), "cond_out");
  body.output(grown, "v_next");
  body.output(body.add("Identity", {grown}), "v_t");

  GraphBuilder b("grow");
  ValueId m = b.input("m", DType::kI64, Shape{});
  ValueId v0 = b.input("v0", DType::kF32, Shape{1});
  std::vector<ValueId> outs = b.add_node(
      "Loop", {m, kNoValue, v0}, {{"body", subgraph(std::move(body))}}, 2);
  b.output(outs[0], "v_final");
  b.output(outs[1], "v_all");
  return typed(std::move(b));
}

TEST(ControlFlow, LoopScanOutputsMustKeepTheirShape) {
  Graph graph = growing_loop();
  // No iteration: the scan output's declared (?) becomes (0, 0).
  auto none =
      run_reference_graph(graph, {Tensor::scalar<int64_t>(0), f32({1}, {5})});
  ASSERT_TRUE(none.is_ok()) << none.status().to_string();
  EXPECT_EQ(values((*none)[0]), (std::vector<double>{5}));
  EXPECT_EQ((*none)[1].dims(), (std::vector<int64_t>{0, 0}));
  auto once =
      run_reference_graph(graph, {Tensor::scalar<int64_t>(1), f32({1}, {5})});
  ASSERT_TRUE(once.is_ok()) << once.status().to_string();
  EXPECT_EQ(values((*once)[0]), (std::vector<double>{5, 1}));
  auto twice =
      run_reference_graph(graph, {Tensor::scalar<int64_t>(2), f32({1}, {5})});
  ASSERT_FALSE(twice.is_ok());
  EXPECT_NE(twice.status().message().find("[Loop]"), std::string::npos);
  EXPECT_NE(twice.status().message().find(
                "scan output 0 must have the same type at every step"),
            std::string::npos)
      << twice.status().message();
}

// A Loop whose body holds an If whose branches read the main graph's x:
// captures resolve through two levels of subgraphs.
TEST(ControlFlow, NestedSubgraphsCaptureThroughEveryLevel) {
  GraphBuilder then_b("then");
  ValueId x_then = then_b.capture("x", DType::kF32, Shape{2});
  then_b.output(then_b.add("Identity", {x_then}), "x_copy");
  GraphBuilder else_b("else");
  ValueId x_else = else_b.capture("x", DType::kF32, Shape{2});
  else_b.output(else_b.add("Neg", {x_else}), "x_neg");

  GraphBuilder body("body");
  ValueId i = body.input("i", DType::kI64, Shape{});
  ValueId cond = body.input("cond_in", DType::kBool, Shape{});
  ValueId acc = body.input("acc", DType::kF32, Shape{2});
  body.capture("x", DType::kF32, Shape{2});
  ValueId zero = body.constant("zero", Tensor::scalar<int64_t>(0));
  ValueId first = body.add("Equal", {i, zero});
  ValueId term = body.add("If", {first},
                          {{"then_branch", subgraph(std::move(then_b))},
                           {"else_branch", subgraph(std::move(else_b))}});
  body.output(body.add("Identity", {cond}), "cond_out");
  body.output(body.add("Add", {acc, term}), "acc_next");

  GraphBuilder b("nested");
  ValueId m = b.input("m", DType::kI64, Shape{});
  ValueId acc0 = b.input("acc0", DType::kF32, Shape{2});
  b.input("x", DType::kF32, Shape{2});
  b.output(
      b.add("Loop", {m, kNoValue, acc0}, {{"body", subgraph(std::move(body))}}),
      "acc");
  Graph graph = typed(std::move(b));
  // acc = 0 + x - x - x = -x
  auto out = run_reference_graph(
      graph, {Tensor::scalar<int64_t>(3), f32({2}, {0, 0}), f32({2}, {1, 2})});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ(values((*out)[0]), (std::vector<double>{-1, -2}));
}

TEST(ControlFlow, BodyErrorsNameTheOp) {
  Graph graph =
      cumsum_scan({}, Shape{2}, Shape{Dim::unknown(), Dim::unknown()});
  // Slices of 3 elements do not fit the body's declared (2).
  auto out =
      run_reference_graph(graph, {f32({2}, {0, 0}), f32({1, 3}, {1, 2, 3})});
  ASSERT_FALSE(out.is_ok());
  EXPECT_NE(out.status().message().find("[Scan]"), std::string::npos)
      << out.status().message();
  EXPECT_NE(out.status().message().find("in 'body'"), std::string::npos)
      << out.status().message();
  EXPECT_NE(out.status().message().find("x_t"), std::string::npos)
      << out.status().message();
}

}  // namespace
}  // namespace seqrt
