// Conformance cases of ops/control: If taking each branch (with captures,
// a constant cond, branches of different shapes), Scan (cumulative sum,
// reverse direction, axis 1, several scan inputs, states with scan inputs
// and outputs in both directions, all along axis 0 as the Vulkan backend
// runs them as loops), Loop (trip count, early
// stop by the body's cond, while-style, zero iterations, a scan output that
// is the carried value), and error cases.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "compiler/infer/infer_graph.h"
#include "graph/builder.h"
#include "tests/conformance/op_case.h"

namespace seqrt {
namespace {

// A finished, typed subgraph. The graphs below are fixed, so a failure here
// is a bug in this file.
std::shared_ptr<Graph> finish(GraphBuilder builder) {
  Result<Graph> graph = std::move(builder).build();
  Status status = graph.is_ok() ? infer_graph(*graph) : graph.status();
  if (!status.is_ok()) {
    std::fprintf(stderr, "control_cases: bad subgraph: %s\n",
                 status.to_string().c_str());
    std::abort();
  }
  return std::make_shared<Graph>(std::move(graph).value());
}

Tensor f32s(std::vector<int64_t> dims, std::vector<float> values) {
  return Tensor::from_vector<float>(std::move(dims), values);
}

// A branch that gives `op` applied to a captured value (2x3 f32 "in1").
std::shared_ptr<Graph> unary_branch(const std::string& name,
                                    const std::string& op) {
  GraphBuilder b(name);
  ValueId x = b.capture("x_outer", DType::kF32, Shape{2, 3});
  b.output(b.add(op, {x}), "y");
  return finish(std::move(b));
}

// A branch that gives a constant.
std::shared_ptr<Graph> constant_branch(const std::string& name, Tensor value) {
  GraphBuilder b(name);
  b.output(b.add("Identity", {b.constant("c", std::move(value))}), "y");
  return finish(std::move(b));
}

OpCase if_case(const std::string& name, Tensor cond,
               std::shared_ptr<Graph> then_branch,
               std::shared_ptr<Graph> else_branch) {
  OpCase c =
      make_case("If", name, {std::move(cond)},
                {{"then_branch", then_branch}, {"else_branch", else_branch}});
  c.outer_values = {{"x_outer", random_tensor(DType::kF32, {2, 3}, 71)}};
  return c;
}

void add_if_cases(std::vector<OpCase>& cases) {
  auto neg = unary_branch("then_neg", "Neg");
  auto relu = unary_branch("else_relu", "Relu");
  cases.push_back(
      if_case("then_capture", Tensor::scalar<bool>(true), neg, relu));
  cases.push_back(if_case("else_capture_1d_cond",
                          Tensor::from_vector<bool>({1}, {false}), neg, relu));
  auto wide = constant_branch("wide", f32s({2, 3}, {1, 2, 3, 4, 5, 6}));
  auto tall =
      constant_branch("tall", f32s({3, 3}, {9, 8, 7, 6, 5, 4, 3, 2, 1}));
  cases.push_back(if_case("branches_differ_in_shape",
                          Tensor::scalar<bool>(false), wide, tall));
  OpCase constant_cond =
      if_case("constant_cond", Tensor::scalar<bool>(true), neg,
              constant_branch("vector", f32s({4}, {1, 2, 3, 4})));
  constant_cond.constant_inputs = {true};
  cases.push_back(constant_cond);
  cases.push_back(expect_failure(
      if_case("cond_not_bool", Tensor::scalar<float>(1.0f), neg, relu)));
  cases.push_back(expect_failure(
      if_case("cond_two_elements",
              Tensor::from_vector<bool>({2}, {true, false}), neg, relu)));
}

// state s, slice x -> (s + x, x * x)
std::shared_ptr<Graph> cumsum_body(DType dtype, Shape shape) {
  GraphBuilder b("cumsum_body");
  ValueId s = b.input("s", dtype, shape);
  ValueId x = b.input("x", dtype, shape);
  b.output(b.add("Add", {s, x}), "s_next");
  b.output(b.add("Mul", {x, x}), "x_squared");
  return finish(std::move(b));
}

// slices x, y and a captured scale -> x * y * scale; no state.
std::shared_ptr<Graph> product_body() {
  GraphBuilder b("product_body");
  ValueId x = b.input("x", DType::kF32, Shape{3});
  ValueId y = b.input("y", DType::kF32, Shape{3});
  ValueId scale = b.capture("scale", DType::kF32, Shape{});
  b.output(b.add("Mul", {b.add("Mul", {x, y}), scale}), "xy");
  return finish(std::move(b));
}

// Two states and three scan inputs (x forward and y reversed along axis 0,
// z reversed along axis 1), giving three scan outputs: the new state s
// (also carried), x * z stacked reversed, y - x stacked along axis 1. Steps
// of 16 floats, so the CPU loop executor writes s and x * z straight into
// their stacked outputs and reads x and y as views; z and y - x are copied.
std::shared_ptr<Graph> two_way_body() {
  GraphBuilder b("two_way_body");
  ValueId s = b.input("s", DType::kF32, Shape{16});
  ValueId acc = b.input("acc", DType::kF32, Shape{2, 16});
  ValueId x = b.input("x", DType::kF32, Shape{16});
  ValueId y = b.input("y", DType::kF32, Shape{16});
  ValueId z = b.input("z", DType::kF32, Shape{16});
  ValueId s_next = b.add("Add", {s, b.add("Mul", {x, y})});
  b.output(s_next, "s_next");
  b.output(b.add("Add", {acc, z}), "acc_next");
  b.output(s_next, "s_steps");
  b.output(b.add("Mul", {x, z}), "xz");
  b.output(b.add("Sub", {y, x}), "y_minus_x");
  return finish(std::move(b));
}

// States that trade places each step: a' = Identity(b), b' = a + x, with
// the step output a + b. The new a is the old b, still held in the loop
// executor's buffers, so this checks no buffer is reused while read.
std::shared_ptr<Graph> swap_body() {
  GraphBuilder b("swap_body");
  ValueId a = b.input("a", DType::kF32, Shape{16});
  ValueId bb = b.input("b", DType::kF32, Shape{16});
  ValueId x = b.input("x", DType::kF32, Shape{16});
  b.output(b.add("Identity", {bb}), "a_next");
  b.output(b.add("Add", {a, x}), "b_next");
  b.output(b.add("Add", {a, bb}), "a_plus_b");
  return finish(std::move(b));
}

// All along axis 0, so the Vulkan backend runs it as a loop (its body
// recorded once): state s, slices x and y (y reversed), a captured scale ->
// s' = s + x * y * scale, given also as a scan output (one value, two
// outputs), and y - x stacked reversed.
std::shared_ptr<Graph> axis0_loop_body() {
  GraphBuilder b("axis0_loop_body");
  ValueId s = b.input("s", DType::kF32, Shape{5});
  ValueId x = b.input("x", DType::kF32, Shape{5});
  ValueId y = b.input("y", DType::kF32, Shape{5});
  ValueId scale = b.capture("scale", DType::kF32, Shape{});
  ValueId s_next =
      b.add("Add", {s, b.add("Mul", {b.add("Mul", {x, y}), scale})});
  b.output(s_next, "s_next");
  b.output(s_next, "s_steps");
  b.output(b.add("Sub", {y, x}), "y_minus_x");
  return finish(std::move(b));
}

void add_scan_cases(std::vector<OpCase>& cases) {
  OpCase axis0 =
      make_case("Scan", "axis0_reversed_capture_shared_output",
                {random_tensor(DType::kF32, {5}, 109),
                 random_tensor(DType::kF32, {6, 5}, 110),
                 random_tensor(DType::kF32, {6, 5}, 111)},
                {{"body", axis0_loop_body()},
                 {"num_scan_inputs", 2},
                 {"scan_input_directions", std::vector<int64_t>{0, 1}},
                 {"scan_output_directions", std::vector<int64_t>{0, 1}}},
                3);
  axis0.outer_values = {{"scale", Tensor::scalar<float>(0.25f)}};
  cases.push_back(axis0);
  cases.push_back(make_case(
      "Scan", "cumsum_i64_axis0",
      {random_tensor(DType::kI64, {3}, 112, -5, 5),
       random_tensor(DType::kI64, {4, 3}, 113, -5, 5)},
      {{"body", cumsum_body(DType::kI64, Shape{3})}, {"num_scan_inputs", 1}},
      2));
  cases.push_back(make_case("Scan", "states_swap_places",
                            {random_tensor(DType::kF32, {16}, 106),
                             random_tensor(DType::kF32, {16}, 107),
                             random_tensor(DType::kF32, {6, 16}, 108)},
                            {{"body", swap_body()}, {"num_scan_inputs", 1}},
                            3));
  cases.push_back(
      make_case("Scan", "states_two_directions_three_outputs",
                {random_tensor(DType::kF32, {16}, 101),
                 random_tensor(DType::kF32, {2, 16}, 102),
                 random_tensor(DType::kF32, {7, 16}, 103),
                 random_tensor(DType::kF32, {7, 16}, 104),
                 random_tensor(DType::kF32, {16, 7}, 105)},
                {{"body", two_way_body()},
                 {"num_scan_inputs", 3},
                 {"scan_input_axes", std::vector<int64_t>{0, 0, 1}},
                 {"scan_input_directions", std::vector<int64_t>{0, 1, 1}},
                 {"scan_output_axes", std::vector<int64_t>{0, 0, 1}},
                 {"scan_output_directions", std::vector<int64_t>{0, 1, 0}}},
                5));
  cases.push_back(make_case(
      "Scan", "cumsum_f32",
      {random_tensor(DType::kF32, {2}, 81),
       random_tensor(DType::kF32, {5, 2}, 82)},
      {{"body", cumsum_body(DType::kF32, Shape{2})}, {"num_scan_inputs", 1}},
      2));
  cases.push_back(
      make_case("Scan", "reverse_axis1_i64",
                {random_tensor(DType::kI64, {3}, 83, -5, 5),
                 random_tensor(DType::kI64, {3, 4}, 84, -5, 5)},
                {{"body", cumsum_body(DType::kI64, Shape{3})},
                 {"num_scan_inputs", 1},
                 {"scan_input_axes", std::vector<int64_t>{1}},
                 {"scan_input_directions", std::vector<int64_t>{1}},
                 {"scan_output_axes", std::vector<int64_t>{-1}},
                 {"scan_output_directions", std::vector<int64_t>{1}}},
                2));
  OpCase two_inputs =
      make_case("Scan", "two_scan_inputs_capture",
                {random_tensor(DType::kF32, {4, 3}, 85),
                 random_tensor(DType::kF32, {3, 4}, 86)},
                {{"body", product_body()},
                 {"num_scan_inputs", 2},
                 {"scan_input_axes", std::vector<int64_t>{0, 1}}});
  two_inputs.outer_values = {{"scale", Tensor::scalar<float>(0.5f)}};
  cases.push_back(two_inputs);
  OpCase mismatch =
      make_case("Scan", "length_mismatch",
                {random_tensor(DType::kF32, {4, 3}, 87),
                 random_tensor(DType::kF32, {5, 3}, 88)},
                {{"body", product_body()}, {"num_scan_inputs", 2}});
  mismatch.outer_values = {{"scale", Tensor::scalar<float>(0.5f)}};
  cases.push_back(expect_failure(mismatch));
  cases.push_back(expect_failure(make_case(
      "Scan", "state_dtype_mismatch",
      {random_tensor(DType::kI64, {2}, 89, -5, 5),
       random_tensor(DType::kF32, {5, 2}, 90)},
      {{"body", cumsum_body(DType::kF32, Shape{2})}, {"num_scan_inputs", 1}},
      2)));
}

// (i, cond, v) -> (i < limit, v + step, v * v); `limit` and `step` are
// captured.
std::shared_ptr<Graph> loop_body() {
  GraphBuilder b("loop_body");
  ValueId i = b.input("i", DType::kI64, Shape{});
  b.input("cond_in", DType::kBool, Shape{});
  ValueId v = b.input("v", DType::kF32, Shape{3});
  ValueId limit = b.capture("limit", DType::kI64, Shape{});
  ValueId step = b.capture("step", DType::kF32, Shape{3});
  b.output(b.add("Less", {i, limit}), "cond_out");
  b.output(b.add("Add", {v, step}), "v_next");
  b.output(b.add("Mul", {v, v}), "v_squared");
  return finish(std::move(b));
}

OpCase loop_case(const std::string& name, Tensor trip_count, Tensor cond,
                 int64_t limit) {
  OpCase c = make_case("Loop", name,
                       {std::move(trip_count), std::move(cond),
                        random_tensor(DType::kF32, {3}, 91)},
                       {{"body", loop_body()}}, 2);
  c.outer_values = {{"limit", Tensor::scalar<int64_t>(limit)},
                    {"step", random_tensor(DType::kF32, {3}, 92)}};
  return c;
}

// (i, cond, v) -> (cond, v + step, Identity(v)): the scan output is the
// carried value as it came in, which the CPU loop executor holds in a
// buffer a later iteration reuses, so each step must be kept apart.
std::shared_ptr<Graph> carried_scan_body() {
  GraphBuilder b("carried_scan_body");
  b.input("i", DType::kI64, Shape{});
  ValueId cond = b.input("cond_in", DType::kBool, Shape{});
  ValueId v = b.input("v", DType::kF32, Shape{16});
  ValueId step = b.capture("step", DType::kF32, Shape{16});
  b.output(b.add("Identity", {cond}), "cond_out");
  b.output(b.add("Add", {v, step}), "v_next");
  b.output(b.add("Identity", {v}), "v_seen");
  return finish(std::move(b));
}

void add_loop_cases(std::vector<OpCase>& cases) {
  OpCase carried_steps =
      make_case("Loop", "scan_output_is_carried_input",
                {Tensor::scalar<int64_t>(5), Tensor::scalar<bool>(true),
                 random_tensor(DType::kF32, {16}, 109)},
                {{"body", carried_scan_body()}}, 2);
  carried_steps.constant_inputs = {true, true, false};
  carried_steps.outer_values = {
      {"step", random_tensor(DType::kF32, {16}, 110)}};
  cases.push_back(carried_steps);
  Tensor yes = Tensor::scalar<bool>(true);
  cases.push_back(
      loop_case("trip_count", Tensor::scalar<int64_t>(4), Tensor(), 100));
  cases.push_back(
      loop_case("cond_stops_early", Tensor::scalar<int64_t>(10), yes, 2));
  cases.push_back(loop_case("while_no_trip_count", Tensor(), yes, 5));
  cases.push_back(loop_case("trip_count_1d",
                            Tensor::from_vector<int64_t>({1}, {3}), yes, 100));
  cases.push_back(
      loop_case("zero_trips", Tensor::scalar<int64_t>(0), yes, 100));
  cases.push_back(loop_case("cond_false_at_start", Tensor::scalar<int64_t>(5),
                            Tensor::scalar<bool>(false), 100));
  cases.push_back(
      expect_failure(loop_case("cond_not_bool", Tensor::scalar<int64_t>(3),
                               Tensor::scalar<float>(1.0f), 100)));
  cases.push_back(expect_failure(
      loop_case("negative_trip_count", Tensor::scalar<int64_t>(-1), yes, 100)));
  OpCase carried =
      loop_case("carried_dtype_mismatch", Tensor::scalar<int64_t>(2), yes, 100);
  carried.inputs[2] = random_tensor(DType::kI64, {3}, 93, -5, 5);
  cases.push_back(expect_failure(carried));
}

}  // namespace

void add_control_cases(std::vector<OpCase>& cases) {
  add_if_cases(cases);
  add_scan_cases(cases);
  add_loop_cases(cases);
}

}  // namespace seqrt
