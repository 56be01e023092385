#include <gtest/gtest.h>

#include <cmath>

#include "compiler/passes/evaluate_reference.h"
#include "compiler/passes/pass_test_util.h"

namespace seqrt {
namespace {

using pass_testing::apply;
using pass_testing::build_or_die;
using pass_testing::count_ops;
using pass_testing::expect_close;
using pass_testing::expect_unchanged;
using pass_testing::random_tensor;

constexpr int64_t kD = 6, kN = 4;

// A selective scan written as a Loop, as an exporter writes
// `for t in range(M): h = exp(Δ_t⊗A)·h + (Δ_t·u_t)⊗B_t; y_t = h·C_t`, or a
// variant the pass must leave alone.
struct LoopForm {
  int64_t length = 7;           // of the sliced tensors; -1: the symbol "seq"
  int64_t trips = 7;            // a constant trip count; -1: a graph input "M"
  bool no_trips = false;        // M omitted
  bool cond_input = false;      // a constant true cond input
  bool cond_identity = false;   // cond out = Identity(cond in)
  bool cond_computed = false;   // cond out = ReduceSum(h) < 1e9
  bool iteration_read = false;  // u_t scaled by the iteration number
  bool gather_axis_1 = false;   // u given as (D, length), sliced on axis 1
};

ValueId ints(GraphBuilder& b, const std::string& name,
             std::vector<int64_t> values) {
  int64_t n = static_cast<int64_t>(values.size());
  return b.constant(name, Tensor::from_vector<int64_t>({n}, values));
}

Tensor a_values() {
  std::vector<float> a;
  for (int64_t i = 0; i < kD * kN; ++i) {
    a.push_back(-static_cast<float>(1 + i % kN));
  }
  return Tensor::from_vector<float>({kD, kN}, a);
}

Dim length_dim(const LoopForm& form) {
  return form.length < 0 ? Dim::symbol("seq") : Dim(form.length);
}

std::shared_ptr<Graph> loop_body(const LoopForm& form) {
  GraphBuilder b("selective_step");
  ValueId iteration = b.input("i", DType::kI64, Shape{});
  ValueId cond = b.input("cond_in", DType::kBool, Shape{});
  ValueId h_prev = b.input("h_prev", DType::kF32, Shape{kD, kN});
  const Dim len = length_dim(form);
  ValueId u_all = form.gather_axis_1
                      ? b.capture("u", DType::kF32, Shape({Dim(kD), len}))
                      : b.capture("u", DType::kF32, Shape({len, Dim(kD)}));
  ValueId delta_all = b.capture("delta", DType::kF32, Shape({len, Dim(kD)}));
  ValueId b_all = b.capture("B", DType::kF32, Shape({len, Dim(kN)}));
  ValueId c_all = b.capture("C", DType::kF32, Shape({len, Dim(kN)}));
  ValueId a = b.capture("A", DType::kF32, Shape{kD, kN});
  AttrMap axis1 = {{"axis", int64_t{1}}};
  ValueId u = b.add("Gather", {u_all, iteration},
                    form.gather_axis_1 ? axis1 : AttrMap{});
  ValueId delta = b.add("Gather", {delta_all, iteration});
  ValueId bt = b.add("Gather", {b_all, iteration}, {{"axis", int64_t{0}}});
  ValueId ct = b.add("Gather", {c_all, iteration});
  if (form.iteration_read) {
    ValueId t = b.add("Cast", {iteration}, {{"to", int64_t{1}}});  // f32
    u = b.add("Mul", {u, t});
  }
  ValueId delta_col = b.add("Unsqueeze", {delta, ints(b, "axis1", {1})});
  ValueId decayed =
      b.add("Mul", {b.add("Exp", {b.add("Mul", {delta_col, a})}), h_prev});
  ValueId delta_u =
      b.add("Unsqueeze", {b.add("Mul", {delta, u}), ints(b, "axis1b", {1})});
  ValueId b_row = b.add("Unsqueeze", {bt, ints(b, "axis0", {0})});
  ValueId h = b.add("Add", {decayed, b.add("Mul", {delta_u, b_row})});
  ValueId c_row = b.add("Unsqueeze", {ct, ints(b, "axis0b", {0})});
  ValueId y =
      b.add("ReduceSum", {b.add("Mul", {h, c_row}), ints(b, "sum_axes", {1})},
            {{"keepdims", Attribute(int64_t{0})}});
  ValueId cond_out = cond;
  if (form.cond_identity) cond_out = b.add("Identity", {cond});
  if (form.cond_computed) {
    ValueId total = b.add("ReduceSum", {h}, {{"keepdims", int64_t{0}}});
    cond_out =
        b.add("Less", {total, b.constant("huge", Tensor::scalar<float>(1e9f))});
  }
  b.output(cond_out, "cond_out");
  b.output(h, "h");
  b.output(y, "y_t");
  return std::make_shared<Graph>(build_or_die(std::move(b)));
}

Graph loop_graph(const LoopForm& form) {
  GraphBuilder b("loop_selective");
  const Dim len = length_dim(form);
  std::vector<ValueId> inputs;
  if (form.no_trips) {
    inputs.push_back(kNoValue);
  } else if (form.trips < 0) {
    inputs.push_back(b.input("M", DType::kI64, Shape{}));
  } else {
    inputs.push_back(b.constant("M", Tensor::scalar<int64_t>(form.trips)));
  }
  inputs.push_back(form.cond_input
                       ? b.constant("go", Tensor::scalar<bool>(true))
                       : kNoValue);
  inputs.push_back(b.input("h0", DType::kF32, Shape{kD, kN}));
  b.input("u", DType::kF32,
          form.gather_axis_1 ? Shape({Dim(kD), len}) : Shape({len, Dim(kD)}));
  b.input("delta", DType::kF32, Shape({len, Dim(kD)}));
  b.input("B", DType::kF32, Shape({len, Dim(kN)}));
  b.input("C", DType::kF32, Shape({len, Dim(kN)}));
  b.constant("A", a_values());
  std::vector<ValueId> outs =
      b.add_node("Loop", inputs, {{"body", loop_body(form)}}, 2,
                 NodeOptions{"ssm_loop", kOnnxDomain, {"h_last", "y"}});
  b.output(outs[0]);
  b.output(outs[1]);
  return build_or_die(std::move(b));
}

// Feeds in graph-input order: (M,) h0, u, delta, B, C over `length` steps.
std::vector<Tensor> loop_feeds(const LoopForm& form, int64_t length,
                               int64_t trips) {
  Tensor delta = random_tensor({length, kD}, 12);
  float* data = delta.mutable_data_as<float>();
  for (int64_t i = 0; i < delta.num_elements(); ++i) {
    data[i] = 0.01f + 0.1f * std::fabs(data[i]);
  }
  std::vector<Tensor> feeds;
  if (form.trips < 0 && !form.no_trips) {
    feeds.push_back(Tensor::scalar<int64_t>(trips));
  }
  feeds.push_back(random_tensor({kD, kN}, 11));
  feeds.push_back(random_tensor({length, kD}, 13));
  feeds.push_back(delta);
  feeds.push_back(random_tensor({length, kN}, 14));
  feeds.push_back(random_tensor({length, kN}, 15));
  return feeds;
}

void expect_same_outputs(const Graph& before, const Graph& after,
                         const std::vector<Tensor>& feeds) {
  Result<std::vector<Tensor>> want = evaluate_reference(before, feeds);
  ASSERT_TRUE(want.is_ok()) << want.status().to_string();
  Result<std::vector<Tensor>> got = evaluate_reference(after, feeds);
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  ASSERT_EQ(got->size(), want->size());
  for (size_t i = 0; i < want->size(); ++i) {
    SCOPED_TRACE(i);
    expect_close((*got)[i], (*want)[i], 1e-5);
  }
}

// loop_to_scan alone gives one Scan, and with lift_scan_recurrences one
// SelectiveScan; both agree with the Loop for `trips` steps over inputs of
// `length`.
void expect_lifted(const LoopForm& form, int64_t length, int64_t trips) {
  Graph loop = apply(loop_graph(form), {});
  Graph scan = apply(loop, {loop_to_scan_pass()});
  EXPECT_EQ(count_ops(scan, "Loop"), 0u);
  EXPECT_EQ(count_ops(scan, "Scan"), 1u);
  Graph lifted =
      apply(loop, {loop_to_scan_pass(), lift_scan_recurrences_pass()});
  EXPECT_EQ(count_ops(lifted, "Scan"), 0u);
  EXPECT_EQ(count_ops(lifted, "SelectiveScan"), 1u);
  const std::vector<Tensor> feeds = loop_feeds(form, length, trips);
  {
    SCOPED_TRACE("Scan");
    expect_same_outputs(loop, scan, feeds);
  }
  {
    SCOPED_TRACE("SelectiveScan");
    expect_same_outputs(loop, lifted, feeds);
  }
}

PassNotes notes_of(const Graph& graph) {
  Graph copy = graph;
  Result<std::vector<PassStats>> stats =
      run_passes(copy, {infer_shapes_pass(), loop_to_scan_pass()});
  EXPECT_TRUE(stats.is_ok()) << stats.status().to_string();
  return stats.is_ok() ? stats->back().notes : PassNotes();
}

TEST(LoopToScan, TripCountEqualToTheLength) {
  expect_lifted(LoopForm{}, 7, 7);
  EXPECT_EQ(notes_of(loop_graph(LoopForm{})),
            PassNotes{"Loop 'ssm_loop' -> Scan (1 state, 4 scan inputs)"});
}

TEST(LoopToScan, ConstantTrueConditionHandedOnThroughIdentity) {
  LoopForm form;
  form.cond_input = true;
  form.cond_identity = true;
  expect_lifted(form, 7, 7);
}

// Five steps over tensors of seven: the Scan reads X[:5] (a Slice).
TEST(LoopToScan, TripCountBelowTheLengthCutsTheInputs) {
  LoopForm form;
  form.trips = 5;
  expect_lifted(form, 7, 5);
  Graph scan = apply(loop_graph(form), {loop_to_scan_pass()});
  EXPECT_EQ(count_ops(scan, "Slice"), 4u);
  EXPECT_EQ(
      notes_of(loop_graph(form)),
      PassNotes{"Loop 'ssm_loop' -> Scan (1 state, 4 scan inputs, 4 cut to "
                "the trip count)"});
}

// A run-time trip count over inputs of a symbolic length: the Scan reads
// Gather(X, Range(0, M)), so it fails where the Loop fails (M past the
// end) and gives the Loop's result otherwise.
TEST(LoopToScan, RunTimeTripCount) {
  LoopForm form;
  form.trips = -1;
  form.length = -1;
  expect_lifted(form, 7, 7);
  expect_lifted(form, 7, 4);
  expect_lifted(form, 7, 0);
  Graph loop = apply(loop_graph(form), {});
  Graph scan = apply(loop, {loop_to_scan_pass()});
  EXPECT_EQ(count_ops(scan, "Range"), 1u);
  const std::vector<Tensor> past_the_end = loop_feeds(form, 7, 8);
  EXPECT_FALSE(evaluate_reference(loop, past_the_end).is_ok());
  EXPECT_FALSE(evaluate_reference(scan, past_the_end).is_ok());
}

TEST(LoopToScan, TripCountPastTheLengthStays) {
  LoopForm form;
  form.trips = 9;
  expect_unchanged(loop_graph(form), loop_to_scan_pass());
  PassNotes notes = notes_of(loop_graph(form));
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("its trip count 9 passes the length 7"),
            std::string::npos)
      << notes[0];
}

TEST(LoopToScan, ConditionComputedInTheBodyStays) {
  LoopForm form;
  form.cond_computed = true;
  expect_unchanged(loop_graph(form), loop_to_scan_pass());
  EXPECT_EQ(notes_of(loop_graph(form)),
            PassNotes{"Loop 'ssm_loop' kept: its body computes the condition"});
}

TEST(LoopToScan, IterationNumberInArithmeticStays) {
  LoopForm form;
  form.iteration_read = true;
  expect_unchanged(loop_graph(form), loop_to_scan_pass());
  PassNotes notes = notes_of(loop_graph(form));
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("the iteration number is read by [Cast]"),
            std::string::npos)
      << notes[0];
}

TEST(LoopToScan, GatherOnAxis1Stays) {
  LoopForm form;
  form.gather_axis_1 = true;
  expect_unchanged(loop_graph(form), loop_to_scan_pass());
  PassNotes notes = notes_of(loop_graph(form));
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("slices axis 1, not 0"), std::string::npos)
      << notes[0];
}

TEST(LoopToScan, LoopWithoutTripCountStays) {
  LoopForm form;
  form.no_trips = true;
  form.cond_computed = true;  // what ends it
  expect_unchanged(loop_graph(form), loop_to_scan_pass());
  EXPECT_EQ(notes_of(loop_graph(form)),
            PassNotes{"Loop 'ssm_loop' kept: it has no trip count"});
}

}  // namespace
}  // namespace seqrt
