// Scan: inference from the body's declared types, and the error paths.
// Runs of the body: backends/reference/control_flow_test.cc, and here the
// prepared body kept across runs (PreparingRunner).
#include <gtest/gtest.h>

#include "ops/control/control_test_util.h"
#include "ops/op_test_util.h"

namespace seqrt {
namespace {

using namespace op_testing;  // NOLINT

// (s, x) -> (s + x, x * x): one state, one scan input, one scan output.
std::shared_ptr<Graph> cumsum_body(DType dtype, Shape shape) {
  GraphBuilder b("body");
  ValueId s = b.input("s", dtype, shape);
  ValueId x = b.input("x", dtype, shape);
  b.output(b.add("Add", {s, x}), "s_next");
  b.output(b.add("Mul", {x, x}), "x_squared");
  return typed_graph(std::move(b));
}

AttrMap scan_attrs(std::shared_ptr<Graph> body, int64_t num_scan_inputs = 1) {
  return {{"body", body}, {"num_scan_inputs", num_scan_inputs}};
}

TEST(Scan, InfersStatesAndStackedOutputs) {
  auto out = infer_types(
      "Scan",
      {typed(DType::kF32, Shape{2}), typed(DType::kF32, Shape{sym("seq"), 2})},
      scan_attrs(cumsum_body(DType::kF32, Shape{2})), 2);
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ(*(*out)[0].shape, Shape({2}));
  EXPECT_EQ((*out)[1].dtype, DType::kF32);
  EXPECT_EQ(*(*out)[1].shape, Shape({sym("seq"), 2}));
}

TEST(Scan, InfersAxesOfInputsAndOutputs) {
  AttrMap attrs = scan_attrs(cumsum_body(DType::kF32, Shape{3}));
  attrs["scan_input_axes"] = std::vector<int64_t>{-1};
  attrs["scan_output_axes"] = std::vector<int64_t>{1};
  attrs["scan_output_directions"] = std::vector<int64_t>{1};
  auto out = infer_types(
      "Scan", {typed(DType::kF32, Shape{3}), typed(DType::kF32, Shape{3, 7})},
      attrs, 2);
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ(*(*out)[1].shape, Shape({3, 7}));
}

TEST(Scan, BodyMustTakeStatesAndSlices) {
  GraphBuilder b("one_input");
  b.output(b.add("Neg", {b.input("x", DType::kF32, Shape{2})}), "y");
  expect_error(infer_types("Scan",
                           {typed(DType::kF32, Shape{2}),
                            typed(DType::kF32, Shape{4, 2})},
                           scan_attrs(typed_graph(std::move(b))), 2)
                   .status(),
               {"[Scan] node 'test'", "'body' must take 2 inputs, it takes 1"});
}

TEST(Scan, StateDtypeMustMatchBody) {
  auto body = cumsum_body(DType::kF32, Shape{2});
  Status inferred = infer_types("Scan",
                                {typed(DType::kI64, Shape{2}),
                                 typed(DType::kF32, Shape{4, 2})},
                                scan_attrs(body), 2)
                        .status();
  expect_error(inferred,
               {"[Scan] node 'test'", "state 0", "must be f32, got i64"});
  Status run = run_op("Scan", {i64({2}, {0, 0}), iota(DType::kF32, {4, 2})},
                      scan_attrs(body), 2)
                   .status();
  expect_error(run, {"[Scan]", "state 0", "must be f32, got i64"});
}

TEST(Scan, ScanInputsMustAgreeOnLength) {
  GraphBuilder b("pair");
  ValueId x = b.input("x", DType::kF32, Shape{2});
  ValueId y = b.input("y", DType::kF32, Shape{2});
  b.output(b.add("Add", {x, y}), "z");
  auto body = typed_graph(std::move(b));
  expect_error(infer_types("Scan",
                           {typed(DType::kF32, Shape{4, 2}),
                            typed(DType::kF32, Shape{5, 2})},
                           scan_attrs(body, 2))
                   .status(),
               {"[Scan]", "disagree on the sequence length: 4 and 5"});
  expect_error(
      run_op("Scan", {iota(DType::kF32, {4, 2}), iota(DType::kF32, {5, 2})},
             scan_attrs(body, 2))
          .status(),
      {"[Scan]", "disagree on the sequence length"});
}

TEST(Scan, ChecksItsAttributes) {
  auto body = cumsum_body(DType::kF32, Shape{2});
  std::vector<ValueInfo> inputs = {typed(DType::kF32, Shape{2}),
                                   typed(DType::kF32, Shape{4, 2})};
  expect_error(infer_types("Scan", inputs, scan_attrs(body, 3), 2).status(),
               {"[Scan]", "num_scan_inputs must be in [1, 2], got 3"});
  AttrMap directions = scan_attrs(body);
  directions["scan_input_directions"] = std::vector<int64_t>{2};
  expect_error(infer_types("Scan", inputs, directions, 2).status(),
               {"[Scan]", "'scan_input_directions' entries must be 0 or 1"});
  AttrMap axes = scan_attrs(body);
  axes["scan_output_axes"] = std::vector<int64_t>{0, 1};
  expect_error(infer_types("Scan", inputs, axes, 2).status(),
               {"[Scan]", "'scan_output_axes' must have 1 entries, got 2"});
  AttrMap out_of_range = scan_attrs(body);
  out_of_range["scan_input_axes"] = std::vector<int64_t>{2};
  expect_error(infer_types("Scan", inputs, out_of_range, 2).status(),
               {"[Scan]", "axis 2"});
}

TEST(Scan, KernelWithoutRunnerFailsCleanly) {
  Status status = run_op("Scan", {f32({2}, {0, 0}), iota(DType::kF32, {4, 2})},
                         scan_attrs(cumsum_body(DType::kF32, Shape{2})), 2)
                      .status();
  expect_error(status, {"[Scan] node 'test'", "no subgraph runner"});
  EXPECT_EQ(status.code(), StatusCode::kInternal);
}

// A Scan of cumsum_body over inputs of symbolic dims (seq, d).
std::shared_ptr<Graph> cumsum_graph() {
  GraphBuilder b("scan");
  ValueId s0 = b.input("s0", DType::kF32, Shape{sym("d")});
  ValueId x = b.input("x", DType::kF32, Shape{sym("seq"), sym("d")});
  std::vector<ValueId> outs =
      b.add_node("Scan", {s0, x},
                 scan_attrs(cumsum_body(DType::kF32, Shape{sym("d")})), 2);
  b.output(outs[0], "s_last");
  b.output(outs[1], "squares");
  return typed_graph(std::move(b));
}

void expect_same(const std::vector<Tensor>& got,
                 const std::vector<Tensor>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_TRUE(got[i].same_as(want[i])) << "output " << i;
  }
}

// The prepared body is kept between runs of the node and serves a run of
// the same dims again; other dims prepare it again, and results match the
// body interpreted every iteration. A run's outputs, still held, are not
// overwritten by the next run.
TEST(Scan, PreparedBodyKeptAcrossRunsOfEitherShape) {
  std::shared_ptr<Graph> graph = cumsum_graph();
  ASSERT_NE(graph, nullptr);
  PreparingRunner runner(*graph);
  const std::vector<Tensor> small = {f32({2}, {1, 2}),
                                     f32({3, 2}, {1, 2, 3, 4, 5, 6})};
  const std::vector<Tensor> large = {f32({3}, {1, 2, 3}),
                                     f32({2, 3}, {-1, 0.5f, 2, 4, -3, 1})};
  auto first = runner.run(small);
  ASSERT_TRUE(first.is_ok()) << first.status().to_string();
  const int64_t choices = runner.choices();
  const std::vector<Tensor> held = {(*first)[0].clone(), (*first)[1].clone()};
  auto again = runner.run(small);
  ASSERT_TRUE(again.is_ok()) << again.status().to_string();
  EXPECT_EQ(runner.choices(), choices);  // the body was not prepared again
  expect_same(*again, held);
  expect_same(*first, held);
  auto other = runner.run(large);
  ASSERT_TRUE(other.is_ok()) << other.status().to_string();
  EXPECT_GT(runner.choices(), choices);  // other dims: prepared again
  auto want = runner.run_unprepared(large);
  ASSERT_TRUE(want.is_ok()) << want.status().to_string();
  expect_same(*other, *want);
  expect_values((*other)[0], {4, -0.5, 6});
  expect_same(*first, held);
}

}  // namespace
}  // namespace seqrt
