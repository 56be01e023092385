#include "compiler/passes/unroll_control_flow.h"

#include <gtest/gtest.h>

#include "compiler/passes/pass_test_util.h"

namespace seqrt {
namespace {

using pass_testing::build_or_die;
using pass_testing::count_ops;
using pass_testing::random_tensor;

std::shared_ptr<Graph> shared(GraphBuilder&& b) {
  return std::make_shared<Graph>(build_or_die(std::move(b)));
}

// The graph written out: no control flow left, and the same outputs as the
// reference interpreter's run of the original on `feeds`.
Graph expect_unrolled(const Graph& graph,
                      const std::map<std::string, Tensor>& feeds,
                      const UnrollOptions& options = {}) {
  Graph typed = graph;
  EXPECT_TRUE(infer_graph(typed).is_ok());
  Graph unrolled = typed;
  Result<bool> changed = unroll_control_flow(unrolled, options);
  EXPECT_TRUE(changed.is_ok()) << changed.status().to_string();
  EXPECT_TRUE(changed.is_ok() && *changed);
  Status typed_again = infer_graph(unrolled);
  EXPECT_TRUE(typed_again.is_ok()) << typed_again.to_string();
  EXPECT_TRUE(verify_graph(unrolled).is_ok());
  for (const Node& node : unrolled.nodes) {
    EXPECT_FALSE(is_control_flow(node)) << node.label();
  }
  auto before = pass_testing::run_reference(typed, feeds);
  auto after = pass_testing::run_reference(unrolled, feeds);
  EXPECT_EQ(before.size(), after.size());
  for (const auto& [name, tensor] : before) {
    SCOPED_TRACE(name);
    EXPECT_TRUE(after.count(name));
    if (after.count(name)) pass_testing::expect_close(after.at(name), tensor);
  }
  return unrolled;
}

// Scan body: state s (d), slice x (d), weight w captured (d):
// s' = s * w + x, out = tanh(s').
std::shared_ptr<Graph> accumulate_body(int64_t d) {
  GraphBuilder b("body");
  ValueId s = b.input("s", DType::kF32, Shape{d});
  ValueId x = b.input("x", DType::kF32, Shape{d});
  ValueId w = b.capture("w", DType::kF32, Shape{d});
  ValueId next = b.add("Add", {b.add("Mul", {s, w}), x});
  b.output(next, "s_next");
  b.output(b.add("Tanh", {next}), "out");
  return shared(std::move(b));
}

// Scan over x (T, d) along `in_axis` with the body above, outputs stacked
// along `out_axis`, directions as given.
Graph scan_graph(Shape x_shape, int64_t in_axis, int64_t in_dir,
                 int64_t out_axis, int64_t out_dir) {
  const int64_t d = 3;
  GraphBuilder b("scan");
  ValueId s0 = b.input("s0", DType::kF32, Shape{d});
  ValueId x = b.input("x", DType::kF32, std::move(x_shape));
  b.input("w", DType::kF32, Shape{d});
  NodeOptions options;
  options.name = "loop";
  auto outs =
      b.add_node("Scan", {s0, x},
                 {{"body", accumulate_body(d)},
                  {"num_scan_inputs", int64_t{1}},
                  {"scan_input_axes", std::vector<int64_t>{in_axis}},
                  {"scan_input_directions", std::vector<int64_t>{in_dir}},
                  {"scan_output_axes", std::vector<int64_t>{out_axis}},
                  {"scan_output_directions", std::vector<int64_t>{out_dir}}},
                 2, options);
  b.output(outs[0], "s_final");
  b.output(outs[1], "ys");
  return build_or_die(std::move(b));
}

std::map<std::string, Tensor> scan_feeds(std::vector<int64_t> x_dims) {
  return {{"s0", random_tensor({3}, 1)},
          {"x", random_tensor(std::move(x_dims), 2)},
          {"w", random_tensor({3}, 3, 0.5f)}};
}

TEST(UnrollControlFlow, ScanForwardAndReverseOnEitherAxis) {
  for (int64_t in_dir : {0, 1}) {
    for (int64_t out_dir : {0, 1}) {
      SCOPED_TRACE(testing::Message() << in_dir << " " << out_dir);
      Graph unrolled = expect_unrolled(
          scan_graph(Shape{4, 3}, 0, in_dir, -1, out_dir), scan_feeds({4, 3}));
      EXPECT_EQ(count_ops(unrolled, "Gather"), 4u);
      EXPECT_EQ(count_ops(unrolled, "Tanh"), 4u);
    }
  }
  expect_unrolled(scan_graph(Shape{3, 5}, 1, 0, 0, 0), scan_feeds({3, 5}));
}

TEST(UnrollControlFlow, ScanOverABoundSymbolicLength) {
  Graph graph = scan_graph(Shape{Dim::symbol("seq"), 3}, 0, 0, 0, 0);
  Graph typed = graph;
  ASSERT_TRUE(infer_graph(typed).is_ok());
  EXPECT_NE(unroll_blocker(typed, typed.nodes[0], {})
                .find("dim 'seq': bind it at compile"),
            std::string::npos)
      << unroll_blocker(typed, typed.nodes[0], {});
  UnrollOptions bound;
  bound.dim_bindings["seq"] = 2;
  // The bound graph runs with inputs of the bound length.
  Graph fixed = scan_graph(Shape{2, 3}, 0, 0, 0, 0);
  expect_unrolled(fixed, scan_feeds({2, 3}), bound);
  EXPECT_EQ(unroll_blocker(typed, typed.nodes[0], bound), "");
}

TEST(UnrollControlFlow, ScanPastTheNodeLimitStays) {
  Graph typed = scan_graph(Shape{400, 3}, 0, 0, 0, 0);
  ASSERT_TRUE(infer_graph(typed).is_ok());
  UnrollOptions small;
  small.max_nodes = 1000;
  EXPECT_NE(unroll_blocker(typed, typed.nodes[0], small).find("over the limit"),
            std::string::npos);
  Result<bool> changed = unroll_control_flow(typed, small);
  ASSERT_TRUE(changed.is_ok());
  EXPECT_FALSE(*changed);
}

// If on a constant condition, with a Scan inside the branch taken (written
// out in a second pass) and a branch not taken that would not type-check.
TEST(UnrollControlFlow, IfOnAConstantConditionAndNestedScan) {
  GraphBuilder then_b("then");
  ValueId s0 = then_b.capture("s0", DType::kF32, Shape{3});
  ValueId x = then_b.capture("x", DType::kF32, Shape{4, 3});
  then_b.capture("w", DType::kF32, Shape{3});  // for the Scan's body
  auto scanned = then_b.add_node(
      "Scan", {s0, x},
      {{"body", accumulate_body(3)}, {"num_scan_inputs", int64_t{1}}}, 2);
  then_b.output(scanned[1], "ys");
  GraphBuilder else_b("else");
  Tensor bad_shape = Tensor::from_vector<int64_t>({1}, {7});
  else_b.output(
      else_b.add("Reshape", {else_b.capture("x", DType::kF32, Shape{4, 3}),
                             else_b.constant("shape", bad_shape)}),
      "ys");
  GraphBuilder b("if");
  b.input("s0", DType::kF32, Shape{3});
  b.input("x", DType::kF32, Shape{4, 3});
  b.input("w", DType::kF32, Shape{3});
  ValueId cond = b.constant("cond", Tensor::scalar<bool>(true));
  b.output(b.add("If", {cond},
                 {{"then_branch", shared(std::move(then_b))},
                  {"else_branch", shared(std::move(else_b))}}),
           "ys");
  Graph unrolled =
      expect_unrolled(build_or_die(std::move(b)), scan_feeds({4, 3}));
  EXPECT_EQ(count_ops(unrolled, "Reshape"), 0u);
}

// y = If(cond) then Neg(x) else Abs(x), x (2); `cond` made by `make_cond`.
Graph neg_or_abs(ValueId (*make_cond)(GraphBuilder&)) {
  GraphBuilder then_b("then");
  then_b.output(then_b.add("Neg", {then_b.capture("x", DType::kF32, Shape{2})}),
                "y");
  GraphBuilder else_b("else");
  else_b.output(else_b.add("Abs", {else_b.capture("x", DType::kF32, Shape{2})}),
                "y");
  GraphBuilder b("if");
  ValueId cond = make_cond(b);
  b.input("x", DType::kF32, Shape{2});
  b.output(b.add("If", {cond},
                 {{"then_branch", shared(std::move(then_b))},
                  {"else_branch", shared(std::move(else_b))}}),
           "y");
  return build_or_die(std::move(b));
}

TEST(UnrollControlFlow, IfOnAConstantNodesCondition) {
  Graph unrolled = expect_unrolled(
      neg_or_abs([](GraphBuilder& b) {
        return b.add("Constant", {}, {{"value", Tensor::scalar<bool>(false)}});
      }),
      {{"x", random_tensor({2}, 9)}});
  EXPECT_EQ(count_ops(unrolled, "Abs"), 1u);
  EXPECT_EQ(count_ops(unrolled, "Neg"), 0u);
}

TEST(UnrollControlFlow, IfOnARunTimeConditionStays) {
  Graph graph = neg_or_abs(
      [](GraphBuilder& b) { return b.input("cond", DType::kBool, Shape{}); });
  ASSERT_TRUE(infer_graph(graph).is_ok());
  EXPECT_NE(unroll_blocker(graph, graph.nodes[0], {}).find("run time"),
            std::string::npos);
}

// Loop with a constant trip count: the body adds the iteration number to a
// carried value and scans it out; its condition passes through.
Graph loop_graph(bool condition_passes_through) {
  GraphBuilder body("body");
  ValueId i = body.input("i", DType::kI64, Shape{});
  ValueId cond = body.input("cond", DType::kBool, Shape{});
  ValueId acc = body.input("acc", DType::kF32, Shape{2});
  ValueId as_float = body.add("Cast", {i}, {{"to", int64_t{1}}});
  ValueId next = body.add("Add", {acc, as_float});
  body.output(condition_passes_through ? body.add("Identity", {cond})
                                       : body.add("Not", {cond}),
              "cond_out");
  body.output(next, "acc_out");
  body.output(body.add("Mul", {next, body.capture("w", DType::kF32, Shape{2})}),
              "scanned");
  GraphBuilder b("loop");
  ValueId trips = b.constant("trips", Tensor::scalar<int64_t>(5));
  ValueId keep = b.constant("keep", Tensor::scalar<bool>(true));
  ValueId acc0 = b.input("acc0", DType::kF32, Shape{2});
  b.input("w", DType::kF32, Shape{2});
  auto outs = b.add_node("Loop", {trips, keep, acc0},
                         {{"body", shared(std::move(body))}}, 2);
  b.output(outs[0], "acc");
  b.output(outs[1], "all");
  return build_or_die(std::move(b));
}

TEST(UnrollControlFlow, LoopWithAConstantTripCount) {
  expect_unrolled(loop_graph(true), {{"acc0", random_tensor({2}, 4)},
                                     {"w", random_tensor({2}, 5)}});
  Graph computed = loop_graph(false);
  ASSERT_TRUE(infer_graph(computed).is_ok());
  EXPECT_NE(unroll_blocker(computed, computed.nodes[0], {})
                .find("computes the condition"),
            std::string::npos);
}

}  // namespace
}  // namespace seqrt
