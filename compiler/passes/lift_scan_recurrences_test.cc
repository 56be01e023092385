#include <gtest/gtest.h>

#include <cmath>

#include "compiler/passes/pass_test_util.h"

namespace seqrt {
namespace {

using pass_testing::build_or_die;
using pass_testing::count_ops;
using pass_testing::expect_fused;
using pass_testing::expect_unchanged;
using pass_testing::random_tensor;

constexpr int64_t kSteps = 7;

ValueId ints(GraphBuilder& b, const std::string& name,
             std::vector<int64_t> values) {
  int64_t n = static_cast<int64_t>(values.size());
  return b.constant(name, Tensor::from_vector<int64_t>({n}, values));
}

// `dims` after a leading batch axis of `batch` (none when 0).
Shape batched(int64_t batch, std::vector<int64_t> dims) {
  if (batch > 0) dims.insert(dims.begin(), batch);
  return Shape::from_dims(dims);
}

// A scan input: `dims` per step, after the time axis and the batch axis.
Shape sequence(int64_t batch, std::vector<int64_t> dims) {
  std::vector<Dim> all = {Dim::symbol("seq")};
  if (batch > 0) all.push_back(Dim(batch));
  for (int64_t dim : dims) all.push_back(Dim(dim));
  return Shape(all);
}

std::shared_ptr<Graph> shared(GraphBuilder&& b) {
  return std::make_shared<Graph>(build_or_die(std::move(b)));
}

// Outputs of the pass's run on `graph`: its notes.
PassNotes notes_of(const Graph& graph) {
  Graph copy = graph;
  Result<std::vector<PassStats>> stats =
      run_passes(copy, {infer_shapes_pass(), lift_scan_recurrences_pass()});
  EXPECT_TRUE(stats.is_ok()) << stats.status().to_string();
  return stats.is_ok() ? stats->back().notes : PassNotes();
}

// ---- selective scan ----

struct SelectiveForm {
  int64_t batch = 0;  // a leading batch axis of this size in the body
  int64_t d = 6, n = 4;
  // Reshape broadcasts, operands commuted, delta·(u·B), MatMul readout and
  // the scan inputs in another order.
  bool rewritten = false;
  bool extra_term = false;  // h' = … + 1
  int squarings = 0;        // u_t squared this many times over
  int64_t sum_axis = 1;
  bool constant_a = true;
  bool body_a = false;   // A a constant of the body, not captured
  float a_sign = -1.0f;  // A = a_sign · [1..N] per channel
};

Tensor a_values(const SelectiveForm& form) {
  std::vector<float> a;
  for (int64_t i = 0; i < form.d * form.n; ++i) {
    a.push_back(form.a_sign * static_cast<float>(1 + i % form.n));
  }
  return Tensor::from_vector<float>({form.d, form.n}, a);
}

// The body as bench/compare/scan_models.py writes it, or `form`'s variant.
std::shared_ptr<Graph> selective_body(const SelectiveForm& form) {
  const int64_t d = form.d, n = form.n, off = form.batch > 0 ? 1 : 0;
  GraphBuilder b("selective_step");
  ValueId h_prev = b.input("h_prev", DType::kF32, batched(form.batch, {d, n}));
  ValueId u, delta, bt, ct;
  if (form.rewritten) {
    bt = b.input("B_t", DType::kF32, Shape{n});
    ct = b.input("C_t", DType::kF32, Shape{n});
    delta = b.input("delta_t", DType::kF32, Shape{d});
    u = b.input("u_t", DType::kF32, Shape{d});
  } else {
    u = b.input("u_t", DType::kF32, batched(form.batch, {d}));
    delta = b.input("delta_t", DType::kF32, batched(form.batch, {d}));
    bt = b.input("B_t", DType::kF32, batched(form.batch, {n}));
    ct = b.input("C_t", DType::kF32, batched(form.batch, {n}));
  }
  ValueId a = form.body_a ? b.constant("A", a_values(form))
                          : b.capture("A", DType::kF32, Shape{d, n});
  ValueId h, y;
  if (form.rewritten) {
    ValueId col = ints(b, "col", {d, 1});
    ValueId row = ints(b, "row", {1, n});
    ValueId delta_col = b.add("Reshape", {delta, col});
    ValueId decay = b.add("Exp", {b.add("Mul", {a, delta_col})});
    ValueId decayed = b.add("Mul", {h_prev, decay});
    ValueId u_b =
        b.add("Mul", {b.add("Reshape", {u, col}), b.add("Reshape", {bt, row})});
    h = b.add("Add", {b.add("Mul", {delta_col, u_b}), decayed});
    y = b.add("MatMul", {h, ct});
  } else {
    ValueId axis0 = ints(b, "axis0", {off});
    ValueId axis1 = ints(b, "axis1", {1 + off});
    ValueId delta_col = b.add("Unsqueeze", {delta, axis1});
    ValueId decay = b.add("Exp", {b.add("Mul", {delta_col, a})});
    ValueId decayed = b.add("Mul", {decay, h_prev});
    for (int i = 0; i < form.squarings; ++i) u = b.add("Mul", {u, u});
    ValueId delta_u = b.add("Unsqueeze", {b.add("Mul", {delta, u}), axis1});
    ValueId b_row = b.add("Unsqueeze", {bt, axis0});
    h = b.add("Add", {decayed, b.add("Mul", {delta_u, b_row})});
    if (form.extra_term) {
      h = b.add("Add", {h, b.constant("one", Tensor::scalar<float>(1.0f))});
    }
    ValueId c_row = b.add("Unsqueeze", {ct, axis0});
    y = b.add(
        "ReduceSum",
        {b.add("Mul", {h, c_row}), ints(b, "sum_axes", {form.sum_axis + off})},
        {{"keepdims", Attribute(int64_t{0})}});
  }
  b.output(h, "h");
  b.output(y, "y_t");
  return shared(std::move(b));
}

Graph selective_graph(const SelectiveForm& form) {
  const int64_t d = form.d, n = form.n;
  GraphBuilder b("scan_selective");
  const int64_t bt = form.batch;
  ValueId h0 = b.input("h0", DType::kF32, batched(bt, {d, n}));
  ValueId u = b.input("u", DType::kF32, sequence(bt, {d}));
  ValueId delta = b.input("delta", DType::kF32, sequence(bt, {d}));
  ValueId bm = b.input("B", DType::kF32, sequence(bt, {n}));
  ValueId cm = b.input("C", DType::kF32, sequence(bt, {n}));
  // A lives outside unless the body holds it.
  if (!form.body_a && form.constant_a) b.constant("A", a_values(form));
  if (!form.body_a && !form.constant_a) {
    b.input("A", DType::kF32, Shape{d, n});
  }
  std::vector<ValueId> inputs = {h0, u, delta, bm, cm};
  if (form.rewritten) inputs = {h0, bm, cm, delta, u};
  std::vector<ValueId> outs = b.add_node(
      "Scan", inputs,
      {{"body", selective_body(form)}, {"num_scan_inputs", int64_t{4}}}, 2,
      NodeOptions{"ssm", kOnnxDomain, {"h_last", "y"}});
  b.output(outs[0]);
  b.output(outs[1]);
  return build_or_die(std::move(b));
}

std::map<std::string, Tensor> selective_feeds(const SelectiveForm& form) {
  auto steps = [&](int64_t size) {
    return form.batch > 0 ? std::vector<int64_t>{kSteps, form.batch, size}
                          : std::vector<int64_t>{kSteps, size};
  };
  Tensor delta = random_tensor(steps(form.d), 12);
  float* data = delta.mutable_data_as<float>();
  for (int64_t i = 0; i < delta.num_elements(); ++i) {
    data[i] = 0.01f + 0.1f * std::fabs(data[i]);
  }
  std::map<std::string, Tensor> feeds = {
      {"h0",
       random_tensor(batched(form.batch, {form.d, form.n}).fixed_dims(), 11)},
      {"u", random_tensor(steps(form.d), 13)},
      {"delta", delta},
      {"B", random_tensor(steps(form.n), 14)},
      {"C", random_tensor(steps(form.n), 15)}};
  if (!form.constant_a) feeds["A"] = random_tensor({form.d, form.n}, 16);
  return feeds;
}

void expect_selective_lift(const SelectiveForm& form) {
  Graph lifted =
      expect_fused(selective_graph(form), lift_scan_recurrences_pass(),
                   "SelectiveScan", 1, selective_feeds(form));
  EXPECT_EQ(count_ops(lifted, "Scan"), 0u);
  for (const Node& node : lifted.nodes) {
    if (node.op != "SelectiveScan") continue;
    EXPECT_EQ(node.domain, kSeqrtDomain);
    EXPECT_EQ(node.attr("delta_softplus")->as_int(), 0);
    EXPECT_EQ(node.outputs.size(), 2u);  // with the final state
  }
}

TEST(LiftScanRecurrences, SelectiveScanAsScanModelsWritesIt) {
  expect_selective_lift(SelectiveForm{});
}

TEST(LiftScanRecurrences, SelectiveScanReadOnTheAlgebra) {
  SelectiveForm form;
  form.rewritten = true;
  expect_selective_lift(form);
  form.d = form.n = 5;  // roles told apart by their axes, not their sizes
  expect_selective_lift(form);
}

TEST(LiftScanRecurrences, SelectiveScanWithAOfItsOwn) {
  SelectiveForm form;
  form.body_a = true;
  expect_selective_lift(form);
}

TEST(LiftScanRecurrences, SelectiveScanWithABatchAxis) {
  SelectiveForm form;
  form.batch = 2;
  expect_selective_lift(form);
}

TEST(LiftScanRecurrences, SelectiveScanLiftIsNoted) {
  PassNotes notes = notes_of(selective_graph(SelectiveForm{}));
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0], "Scan 'ssm' -> seqrt::SelectiveScan (D 6, N 4)");
}

TEST(LiftScanRecurrences, SelectiveScanWithAnExtraTermStays) {
  SelectiveForm form;
  form.extra_term = true;
  expect_unchanged(selective_graph(form), lift_scan_recurrences_pass());
}

TEST(LiftScanRecurrences, SelectiveScanSummingTheWrongAxisStays) {
  SelectiveForm form;
  form.d = form.n = 4;  // so that the output shapes do not tell
  form.sum_axis = 0;
  expect_unchanged(selective_graph(form), lift_scan_recurrences_pass());
}

// 2^40 factors if the reader followed them all: it gives up first.
TEST(LiftScanRecurrences, SelectiveScanWithADeepProductStays) {
  SelectiveForm form;
  form.squarings = 40;
  expect_unchanged(selective_graph(form), lift_scan_recurrences_pass());
}

TEST(LiftScanRecurrences, SelectiveScanWithARunTimeAStays) {
  SelectiveForm form;
  form.constant_a = false;
  expect_unchanged(selective_graph(form), lift_scan_recurrences_pass());
}

// A = +60·[1..N] overflows within the check's steps: it cannot be checked,
// so the Scan stays, with a note saying why.
TEST(LiftScanRecurrences, SelectiveScanThatFailsTheCheckStays) {
  SelectiveForm form;
  form.a_sign = 60.0f;
  expect_unchanged(selective_graph(form), lift_scan_recurrences_pass());
  PassNotes notes = notes_of(selective_graph(form));
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("Scan 'ssm' kept"), std::string::npos) << notes[0];
}

// ---- retention ----

struct RetentionForm {
  int64_t batch = 0;  // a leading batch axis of this size in the body
  int64_t heads = 3, dk = 4, dv = 5;
  // Reshape for γ, operands commuted, the outer product as MatMul, the
  // ReduceSum read-out and the scan inputs in another order.
  bool rewritten = false;
  bool extra_term = false;  // S' = … + 1
  int64_t sum_axis = 1;     // of the rewritten read-out
  bool constant_gamma = true;
};

std::shared_ptr<Graph> retention_body(const RetentionForm& form) {
  const int64_t h = form.heads, dk = form.dk, dv = form.dv;
  const int64_t bt = form.batch, off = bt > 0 ? 1 : 0;
  GraphBuilder b("retention_step");
  ValueId s_prev = b.input("S_prev", DType::kF32, batched(bt, {h, dk, dv}));
  ValueId q, k, v;
  if (form.rewritten) {
    v = b.input("v_t", DType::kF32, batched(bt, {h, dv}));
    q = b.input("q_t", DType::kF32, batched(bt, {h, dk}));
    k = b.input("k_t", DType::kF32, batched(bt, {h, dk}));
  } else {
    q = b.input("q_t", DType::kF32, batched(bt, {h, dk}));
    k = b.input("k_t", DType::kF32, batched(bt, {h, dk}));
    v = b.input("v_t", DType::kF32, batched(bt, {h, dv}));
  }
  ValueId gamma = b.capture("gamma", DType::kF32, Shape{h});
  ValueId axis1 = ints(b, "axis1", {1 + off});
  ValueId axis2 = ints(b, "axis2", {2 + off});
  ValueId k_col = b.add("Unsqueeze", {k, axis2});
  ValueId v_row = b.add("Unsqueeze", {v, axis1});
  ValueId s, o;
  if (form.rewritten) {
    ValueId gamma_hd = b.add("Reshape", {gamma, ints(b, "hd", {h, 1, 1})});
    ValueId decayed = b.add("Mul", {s_prev, gamma_hd});
    s = b.add("Add", {b.add("MatMul", {k_col, v_row}), decayed});
    ValueId q_col = b.add("Unsqueeze", {q, axis2});
    o = b.add(
        "ReduceSum",
        {b.add("Mul", {s, q_col}), ints(b, "sum_axes", {form.sum_axis + off})},
        {{"keepdims", Attribute(int64_t{0})}});
  } else {
    ValueId gamma_hd = b.add("Unsqueeze", {gamma, ints(b, "axes12", {1, 2})});
    s = b.add("Add",
              {b.add("Mul", {gamma_hd, s_prev}), b.add("Mul", {k_col, v_row})});
    if (form.extra_term) {
      s = b.add("Add", {s, b.constant("one", Tensor::scalar<float>(1.0f))});
    }
    ValueId q_row = b.add("Unsqueeze", {q, axis1});
    o = b.add("Squeeze", {b.add("MatMul", {q_row, s}), axis1});
  }
  b.output(s, "S");
  b.output(o, "o_t");
  return shared(std::move(b));
}

Graph retention_graph(const RetentionForm& form) {
  const int64_t h = form.heads, dk = form.dk, dv = form.dv;
  GraphBuilder b("scan_retention");
  const int64_t bt = form.batch;
  ValueId s0 = b.input("S0", DType::kF32, batched(bt, {h, dk, dv}));
  ValueId q = b.input("q", DType::kF32, sequence(bt, {h, dk}));
  ValueId k = b.input("k", DType::kF32, sequence(bt, {h, dk}));
  ValueId v = b.input("v", DType::kF32, sequence(bt, {h, dv}));
  std::vector<float> gamma;
  for (int64_t i = 0; i < h; ++i) {
    gamma.push_back(1.0f - std::pow(2.0f, -1.0f - static_cast<float>(i)));
  }
  if (form.constant_gamma) {
    b.constant("gamma", Tensor::from_vector<float>({h}, gamma));
  } else {
    b.input("gamma", DType::kF32, Shape{h});
  }
  std::vector<ValueId> inputs = {s0, q, k, v};
  if (form.rewritten) inputs = {s0, v, q, k};
  std::vector<ValueId> outs = b.add_node(
      "Scan", inputs,
      {{"body", retention_body(form)}, {"num_scan_inputs", int64_t{3}}}, 2,
      NodeOptions{"retention", kOnnxDomain, {"S_last", "o"}});
  b.output(outs[0]);
  b.output(outs[1]);
  return build_or_die(std::move(b));
}

std::map<std::string, Tensor> retention_feeds(const RetentionForm& form) {
  const int64_t h = form.heads, bt = form.batch;
  auto steps = [&](int64_t size) {
    std::vector<int64_t> dims = batched(bt, {h, size}).fixed_dims();
    dims.insert(dims.begin(), kSteps);
    return dims;
  };
  std::map<std::string, Tensor> feeds = {
      {"S0",
       random_tensor(batched(bt, {h, form.dk, form.dv}).fixed_dims(), 21)},
      {"q", random_tensor(steps(form.dk), 22)},
      {"k", random_tensor(steps(form.dk), 23)},
      {"v", random_tensor(steps(form.dv), 24)}};
  if (!form.constant_gamma) feeds["gamma"] = random_tensor({h}, 25, 0.1f);
  return feeds;
}

void expect_retention_lift(const RetentionForm& form) {
  Graph lifted =
      expect_fused(retention_graph(form), lift_scan_recurrences_pass(),
                   "Retention", 1, retention_feeds(form));
  EXPECT_EQ(count_ops(lifted, "Scan"), 0u);
  for (const Node& node : lifted.nodes) {
    if (node.op != "Retention") continue;
    EXPECT_EQ(node.domain, kSeqrtDomain);
    EXPECT_EQ(node.attr("scale")->as_float(), 1.0f);
    const std::vector<float>& gammas = node.attr("gammas")->as_floats();
    ASSERT_EQ(gammas.size(), static_cast<size_t>(form.heads));
    EXPECT_EQ(gammas[0], 0.5f);
    EXPECT_EQ(gammas[1], 0.75f);
    EXPECT_EQ(node.outputs.size(), 2u);
  }
}

TEST(LiftScanRecurrences, RetentionAsScanModelsWritesIt) {
  expect_retention_lift(RetentionForm{});
}

TEST(LiftScanRecurrences, RetentionReadOnTheAlgebra) {
  RetentionForm form;
  form.rewritten = true;
  expect_retention_lift(form);
  form.dk = form.dv = 4;  // k and v told apart by their axes
  expect_retention_lift(form);
}

TEST(LiftScanRecurrences, RetentionWithABatchAxis) {
  RetentionForm form;
  form.batch = 2;
  expect_retention_lift(form);
  form.rewritten = true;
  expect_retention_lift(form);
}

TEST(LiftScanRecurrences, RetentionLiftIsNoted) {
  PassNotes notes = notes_of(retention_graph(RetentionForm{}));
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0], "Scan 'retention' -> seqrt::Retention (H 3, state 4x5)");
}

TEST(LiftScanRecurrences, RetentionWithAnExtraTermStays) {
  RetentionForm form;
  form.extra_term = true;
  expect_unchanged(retention_graph(form), lift_scan_recurrences_pass());
}

TEST(LiftScanRecurrences, RetentionSummingTheWrongAxisStays) {
  RetentionForm form;
  form.rewritten = true;
  form.dk = form.dv = 4;  // so that the output shapes do not tell
  form.sum_axis = 2;
  expect_unchanged(retention_graph(form), lift_scan_recurrences_pass());
}

TEST(LiftScanRecurrences, RetentionWithARunTimeGammaStays) {
  RetentionForm form;
  form.constant_gamma = false;
  expect_unchanged(retention_graph(form), lift_scan_recurrences_pass());
}

}  // namespace
}  // namespace seqrt
