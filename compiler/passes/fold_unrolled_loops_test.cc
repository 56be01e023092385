#include <gtest/gtest.h>

#include "compiler/passes/pass_test_util.h"

namespace seqrt {
namespace {

using pass_testing::apply;
using pass_testing::build_or_die;
using pass_testing::count_ops;
using pass_testing::expect_fused;
using pass_testing::expect_unchanged;
using pass_testing::random_tensor;

constexpr int64_t kD = 6, kN = 4;

// How the unrolled loop below departs from what a tracer writes.
struct Unrolled {
  int64_t steps = 7;
  Dim batch = Dim(2);
  bool odd_step = false;    // one copy adds a constant the others lack
  bool skip = false;        // step t also reads step t-2's state
  bool leak = false;        // a middle step's readout is a graph output
  bool final_state = true;  // the last state is a graph output
};

ValueId ints(GraphBuilder& b, const std::string& name,
             std::vector<int64_t> values) {
  const int64_t n = static_cast<int64_t>(values.size());
  return b.constant(name, Tensor::from_vector<int64_t>({n}, values));
}

ValueId index(GraphBuilder& b, const std::string& name, int64_t i) {
  return b.constant(name, Tensor::scalar<int64_t>(i));
}

// transformers' MambaMixer.slow_forward as torch.onnx writes it: exp(Δ·A)
// and Δ·B·u over the whole sequence, then per step Gathers of step t,
// h = dA_t·h + dBu_t, y_t = (h·C_t[…, None])[…, 0], stacked by
// Unsqueeze + Concat on the last axis.
Graph unrolled_mamba(const Unrolled& form) {
  GraphBuilder b("unrolled_mamba");
  const Dim t_dim(form.steps);
  ValueId u = b.input("u", DType::kF32, Shape{form.batch, kD, t_dim});
  ValueId dt = b.input("dt", DType::kF32, Shape{form.batch, kD, t_dim});
  ValueId bm = b.input("B", DType::kF32, Shape{form.batch, t_dim, kN});
  ValueId cm = b.input("C", DType::kF32, Shape{form.batch, t_dim, kN});
  ValueId h = b.input("h0", DType::kF32, Shape{form.batch, kD, kN});
  std::vector<float> a;
  for (int64_t i = 0; i < kD * kN; ++i) a.push_back(-1.0f - (i % kN));
  ValueId a4 = b.constant("A", Tensor::from_vector<float>({1, kD, 1, kN}, a));
  ValueId dt4 = b.add("Unsqueeze", {dt, ints(b, "last", {3})});
  ValueId da = b.add("Exp", {b.add("Mul", {a4, dt4})});
  ValueId db =
      b.add("Mul", {dt4, b.add("Unsqueeze", {bm, ints(b, "one", {1})})});
  ValueId dbu =
      b.add("Mul", {db, b.add("Unsqueeze", {u, ints(b, "last_u", {-1})})});
  std::vector<ValueId> ys, states = {h};
  ValueId zero = index(b, "zero", 0);
  for (int64_t t = 0; t < form.steps; ++t) {
    const std::string s = std::to_string(t);
    ValueId i = t == 0 ? zero : index(b, "i" + s, t);
    ValueId a_t = b.add("Gather", {da, i}, {{"axis", int64_t{2}}});
    ValueId b_t = b.add("Gather", {dbu, i}, {{"axis", int64_t{2}}});
    h = b.add("Add", {b.add("Mul", {a_t, h}), b_t});
    if (form.odd_step && t == 3) {
      h = b.add("Add", {h, b.constant("odd", Tensor::scalar<float>(0.5f))});
    }
    if (form.skip && t >= 2) h = b.add("Add", {h, states[t - 1]});
    states.push_back(h);
    ValueId c_t =
        b.add("Unsqueeze", {b.add("Gather", {cm, i}, {{"axis", int64_t{1}}}),
                            ints(b, "c_axes" + s, {-1})});
    ValueId y = b.add("Gather", {b.add("MatMul", {h, c_t}), zero},
                      {{"axis", int64_t{2}}});
    if (form.leak && t == 2) b.output(y, "y_2");
    ys.push_back(b.add("Unsqueeze", {y, ints(b, "stack" + s, {-1})}));
  }
  b.output(b.add("Concat", ys, {{"axis", int64_t{-1}}}), "y");
  if (form.final_state) b.output(h, "h_last");
  return build_or_die(std::move(b));
}

std::map<std::string, Tensor> feeds(const Unrolled& form, int64_t batch) {
  Tensor dt = random_tensor({batch, kD, form.steps}, 2);
  float* data = dt.mutable_data_as<float>();
  for (int64_t i = 0; i < dt.num_elements(); ++i) {
    data[i] = 0.01f + 0.1f * std::fabs(data[i]);
  }
  return {{"u", random_tensor({batch, kD, form.steps}, 1)},
          {"dt", dt},
          {"B", random_tensor({batch, form.steps, kN}, 3)},
          {"C", random_tensor({batch, form.steps, kN}, 4)},
          {"h0", random_tensor({batch, kD, kN}, 5)}};
}

TEST(FoldUnrolledLoops, MambaNaiveExportBecomesOneScan) {
  Unrolled form;
  Graph folded = expect_fused(unrolled_mamba(form), fold_unrolled_loops_pass(),
                              "Scan", 1, feeds(form, 2));
  EXPECT_EQ(count_ops(folded, "Gather"), 0u);
  EXPECT_EQ(count_ops(folded, "Concat"), 0u);
  // exp(Δ·A) and Δ·B·u moved into the body: only the loop read them, so
  // nothing reads them outside any more.
  EXPECT_EQ(count_ops(apply(folded, {eliminate_dead_code_pass()}), "Exp"), 0u);
  for (const Node& node : folded.nodes) {
    if (node.op != "Scan") continue;
    EXPECT_EQ(node.attr("num_scan_inputs")->as_int(), 4);  // u, dt, B, C
  }
}

TEST(FoldUnrolledLoops, WithoutTheFinalStateAndASymbolicBatch) {
  Unrolled form;
  form.final_state = false;
  form.batch = Dim::symbol("batch");
  expect_fused(unrolled_mamba(form), fold_unrolled_loops_pass(), "Scan", 1,
               feeds(form, 3));
}

TEST(FoldUnrolledLoops, FoldedThenLiftedIntoSelectiveScan) {
  Unrolled form;
  form.batch = Dim::symbol("batch");
  Graph graph = unrolled_mamba(form);
  Graph lifted =
      apply(graph, {fold_unrolled_loops_pass(), lift_scan_recurrences_pass()});
  EXPECT_EQ(count_ops(lifted, "SelectiveScan"), 1u);
  EXPECT_EQ(count_ops(lifted, "Scan"), 0u);
  std::map<std::string, Tensor> in = feeds(form, 2);
  std::map<std::string, Tensor> want = pass_testing::run_reference(graph, in);
  std::map<std::string, Tensor> got = pass_testing::run_reference(lifted, in);
  for (const auto& [name, tensor] : want) {
    SCOPED_TRACE(name);
    pass_testing::expect_close(got.at(name), tensor, 1e-4);
  }
}

TEST(FoldUnrolledLoops, FoldIsNoted) {
  Graph graph = unrolled_mamba(Unrolled{});
  Result<std::vector<PassStats>> stats =
      run_passes(graph, {infer_shapes_pass(), fold_unrolled_loops_pass()});
  ASSERT_TRUE(stats.is_ok()) << stats.status().to_string();
  ASSERT_EQ(stats->back().notes.size(), 1u);
  EXPECT_NE(stats->back().notes[0].find("7 copies of a step"),
            std::string::npos)
      << stats->back().notes[0];
}

TEST(FoldUnrolledLoops, CopiesThatDifferStay) {
  Unrolled form;
  form.odd_step = true;
  expect_unchanged(unrolled_mamba(form), fold_unrolled_loops_pass());
}

TEST(FoldUnrolledLoops, AStepReadingTwoStepsBackStays) {
  Unrolled form;
  form.skip = true;
  expect_unchanged(unrolled_mamba(form), fold_unrolled_loops_pass());
}

TEST(FoldUnrolledLoops, AMiddleStepsValueReadOutsideStays) {
  Unrolled form;
  form.leak = true;
  expect_unchanged(unrolled_mamba(form), fold_unrolled_loops_pass());
}

TEST(FoldUnrolledLoops, TwoStepsStay) {
  Unrolled form;
  form.steps = 2;
  expect_unchanged(unrolled_mamba(form), fold_unrolled_loops_pass());
}

}  // namespace
}  // namespace seqrt
