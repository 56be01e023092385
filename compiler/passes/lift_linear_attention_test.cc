#include <gtest/gtest.h>

#include "compiler/passes/pass_test_util.h"

namespace seqrt {
namespace {

using pass_testing::build_or_die;
using pass_testing::count_ops;
using pass_testing::expect_fused;
using pass_testing::expect_unchanged;
using pass_testing::random_tensor;

constexpr int64_t kSteps = 6, kH = 3, kDk = 4, kDv = 5;

enum class Rule { kGated, kDelta };

struct LinearForm {
  Rule rule = Rule::kGated;
  int64_t batch = 0;  // a leading batch axis of this size
  bool gate_per_key = false;
  bool gate_as_is = false;      // a_t read as it is, not Exp(g_t)
  bool sum_readout = false;     // ReduceSum forms instead of MatMul
  bool plus_error = false;      // delta with v + Sᵀk: not the delta rule
  bool gate_on_update = false;  // gated with a_t on k ⊗ v instead of S
};

ValueId ints(GraphBuilder& b, const std::string& name,
             std::vector<int64_t> values) {
  const int64_t n = static_cast<int64_t>(values.size());
  return b.constant(name, Tensor::from_vector<int64_t>({n}, values));
}

std::vector<int64_t> with_batch(const LinearForm& form,
                                std::vector<int64_t> dims) {
  if (form.batch > 0) dims.insert(dims.begin(), form.batch);
  return dims;
}

std::vector<int64_t> gate_dims(const LinearForm& form) {
  return form.rule == Rule::kDelta
             ? with_batch(form, {kH})
             : with_batch(form, form.gate_per_key
                                    ? std::vector<int64_t>{kH, kDk}
                                    : std::vector<int64_t>{kH});
}

// One step of the recurrence, the way a hand-written ONNX graph has it.
std::shared_ptr<Graph> linear_body(const LinearForm& form) {
  const int64_t off = form.batch > 0 ? 1 : 0;
  GraphBuilder b("linear_step");
  ValueId s = b.input("S", DType::kF32,
                      Shape::from_dims(with_batch(form, {kH, kDk, kDv})));
  ValueId q = b.input("q_t", DType::kF32,
                      Shape::from_dims(with_batch(form, {kH, kDk})));
  ValueId k = b.input("k_t", DType::kF32,
                      Shape::from_dims(with_batch(form, {kH, kDk})));
  ValueId v = b.input("v_t", DType::kF32,
                      Shape::from_dims(with_batch(form, {kH, kDv})));
  ValueId g = b.input("g_t", DType::kF32, Shape::from_dims(gate_dims(form)));
  ValueId dk_axis = ints(b, "dk_axis", {1 + off});
  ValueId k_col = b.add("Unsqueeze", {k, ints(b, "k_col", {2 + off})});
  ValueId s_new;
  if (form.rule == Rule::kGated) {
    ValueId a = form.gate_as_is ? g : b.add("Exp", {g});
    ValueId a_full =
        form.gate_per_key
            ? b.add("Unsqueeze", {a, ints(b, "a_axes", {2 + off})})
            : b.add("Unsqueeze", {a, ints(b, "a_axes", {1 + off, 2 + off})});
    ValueId v_row = b.add("Unsqueeze", {v, dk_axis});
    ValueId kv = b.add("MatMul", {k_col, v_row});
    s_new = form.gate_on_update ? b.add("Add", {s, b.add("Mul", {a_full, kv})})
                                : b.add("Add", {b.add("Mul", {a_full, s}), kv});
  } else {
    // Sᵀk per head: (H,1,dk)·(H,dk,dv) or Σ over dk of S·k[…,None].
    ValueId sk;
    if (form.sum_readout) {
      sk = b.add("ReduceSum", {b.add("Mul", {s, k_col}), dk_axis},
                 {{"keepdims", Attribute(int64_t{0})}});
    } else {
      ValueId k_row = b.add("Unsqueeze", {k, dk_axis});
      sk = b.add("Squeeze", {b.add("MatMul", {k_row, s}), dk_axis});
    }
    ValueId error = b.add(form.plus_error ? "Add" : "Sub", {v, sk});
    ValueId beta = b.add("Unsqueeze", {g, ints(b, "beta_axes", {1 + off})});
    ValueId scaled = b.add("Mul", {beta, error});
    s_new = b.add(
        "Add",
        {s, b.add("Mul", {k_col, b.add("Unsqueeze", {scaled, dk_axis})})});
  }
  ValueId o;
  if (form.sum_readout) {
    ValueId q_col = b.add("Unsqueeze", {q, ints(b, "q_col", {2 + off})});
    o = b.add("ReduceSum", {b.add("Mul", {q_col, s_new}), dk_axis},
              {{"keepdims", Attribute(int64_t{0})}});
  } else {
    ValueId q_row = b.add("Unsqueeze", {q, dk_axis});
    o = b.add("Squeeze", {b.add("MatMul", {q_row, s_new}), dk_axis});
  }
  b.output(s_new, "S_new");
  b.output(o, "o_t");
  return std::make_shared<Graph>(build_or_die(std::move(b)));
}

Shape steps_of(const std::vector<int64_t>& dims) {
  std::vector<Dim> all = {Dim::symbol("seq")};
  for (int64_t d : dims) all.push_back(Dim(d));
  return Shape(all);
}

Graph linear_graph(const LinearForm& form) {
  GraphBuilder b("scan_linear");
  ValueId s0 = b.input("S0", DType::kF32,
                       Shape::from_dims(with_batch(form, {kH, kDk, kDv})));
  ValueId q = b.input("q", DType::kF32, steps_of(with_batch(form, {kH, kDk})));
  ValueId k = b.input("k", DType::kF32, steps_of(with_batch(form, {kH, kDk})));
  ValueId v = b.input("v", DType::kF32, steps_of(with_batch(form, {kH, kDv})));
  ValueId g = b.input("g", DType::kF32, steps_of(gate_dims(form)));
  std::vector<ValueId> outs =
      b.add_node("Scan", {s0, q, k, v, g},
                 {{"body", linear_body(form)}, {"num_scan_inputs", int64_t{4}}},
                 2, NodeOptions{"linear", kOnnxDomain, {"S_last", "o"}});
  b.output(outs[0]);
  b.output(outs[1]);
  return build_or_die(std::move(b));
}

std::map<std::string, Tensor> linear_feeds(const LinearForm& form) {
  auto steps = [](std::vector<int64_t> dims) {
    dims.insert(dims.begin(), kSteps);
    return dims;
  };
  Tensor g = random_tensor(steps(gate_dims(form)), 35, 0.5f);
  if (form.rule == Rule::kDelta || form.gate_as_is) {
    // β in (0, 1] and a gate a_t in (0, 1].
    float* data = g.mutable_data_as<float>();
    for (int64_t i = 0; i < g.num_elements(); ++i) {
      data[i] = 0.2f + 0.5f * std::fabs(data[i]) / (1.0f + std::fabs(data[i]));
    }
  }
  return {{"S0", random_tensor(with_batch(form, {kH, kDk, kDv}), 31)},
          {"q", random_tensor(steps(with_batch(form, {kH, kDk})), 32)},
          {"k", random_tensor(steps(with_batch(form, {kH, kDk})), 33, 0.5f)},
          {"v", random_tensor(steps(with_batch(form, {kH, kDv})), 34)},
          {"g", g}};
}

void expect_linear_lift(const LinearForm& form) {
  Graph lifted = expect_fused(linear_graph(form), lift_scan_recurrences_pass(),
                              "LinearAttention", 1, linear_feeds(form));
  EXPECT_EQ(count_ops(lifted, "Scan"), 0u);
  for (const Node& node : lifted.nodes) {
    if (node.op != "LinearAttention") continue;
    EXPECT_EQ(node.attr("update_rule")->as_string(),
              form.rule == Rule::kDelta ? "delta" : "gated");
    EXPECT_EQ(node.attr("q_num_heads")->as_int(), kH);
    EXPECT_EQ(node.outputs.size(), 2u);
  }
}

TEST(LiftLinearAttention, GatedPerHead) { expect_linear_lift(LinearForm{}); }

TEST(LiftLinearAttention, GatedPerKeyWithABatchAxis) {
  LinearForm form;
  form.gate_per_key = true;
  form.batch = 2;
  expect_linear_lift(form);
}

TEST(LiftLinearAttention, GatedWithTheGateReadAsItIs) {
  LinearForm form;
  form.gate_as_is = true;
  form.sum_readout = true;
  expect_linear_lift(form);
}

TEST(LiftLinearAttention, DeltaRule) {
  LinearForm form;
  form.rule = Rule::kDelta;
  expect_linear_lift(form);
}

TEST(LiftLinearAttention, DeltaRuleSummedWithABatchAxis) {
  LinearForm form;
  form.rule = Rule::kDelta;
  form.sum_readout = true;
  form.batch = 2;
  expect_linear_lift(form);
}

TEST(LiftLinearAttention, DeltaWithThePlusSignStays) {
  LinearForm form;
  form.rule = Rule::kDelta;
  form.plus_error = true;
  expect_unchanged(linear_graph(form), lift_scan_recurrences_pass());
}

TEST(LiftLinearAttention, GateOnTheUpdateStays) {
  LinearForm form;
  form.gate_on_update = true;  // S' = S + a·(k ⊗ v): no decay of S
  expect_unchanged(linear_graph(form), lift_scan_recurrences_pass());
}

}  // namespace
}  // namespace seqrt
