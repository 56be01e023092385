// LSTM and GRU cells written as Scan bodies (lift_rnn_cells.cc): each form
// becomes the ONNX op and gives the Scan's outputs; near misses stay.
#include <gtest/gtest.h>

#include "compiler/passes/pass_test_util.h"

namespace seqrt {
namespace {

using pass_testing::build_or_die;
using pass_testing::count_ops;
using pass_testing::expect_fused;
using pass_testing::expect_unchanged;
using pass_testing::random_tensor;

constexpr int64_t kSteps = 6;
constexpr int64_t kIn = 5, kHidden = 4;

enum class Cut { kSplitAttr, kSplitInput, kSlices };
enum class Product { kMatMul, kGemmTransB };

// What every cell form shares.
struct CellForm {
  int64_t batch = 1;  // 0: no batch axis
  Cut cut = Cut::kSplitAttr;
  Product product = Product::kMatMul;
  bool two_biases = false;      // Wb + Rb
  bool bias_first = false;      // (x·W + b) + h·R
  bool gemm_bias = false;       // Gemm(x, W, b, transB=1) + h·R
  bool body_weights = false;    // constants of the body, not captured
  bool runtime_weight = false;  // W an input of the outer graph
  bool scan_output = true;
  bool wrong_activation = false;  // Relu in place of the candidate's Tanh
  bool wrong_wiring = false;
};

Shape batched(int64_t batch, int64_t n) {
  return batch > 0 ? Shape{batch, n} : Shape{n};
}

Shape sequence(int64_t batch, int64_t n) {
  std::vector<Dim> dims = {Dim::symbol("seq")};
  if (batch > 0) dims.push_back(Dim(batch));
  dims.push_back(Dim(n));
  return Shape(dims);
}

// An int64 constant; names made unique, since a body holds several.
ValueId ints(GraphBuilder& b, const std::string& name,
             std::vector<int64_t> values) {
  int64_t n = static_cast<int64_t>(values.size());
  const std::string unique = name + std::to_string(b.graph().values.size());
  return b.constant(unique, Tensor::from_vector<int64_t>({n}, values));
}

// Weights the outer graph holds (or the body, or run-time inputs).
struct Weights {
  std::map<std::string, Tensor> tensors;
};

// A weight `name` of `dims` as the body reads it.
ValueId weight(GraphBuilder& b, const CellForm& form, Weights& weights,
               const std::string& name, std::vector<int64_t> dims,
               uint32_t seed) {
  Tensor t = random_tensor(dims, seed, 0.5f);
  weights.tensors[name] = t;
  if (form.body_weights) return b.constant(name, t);
  return b.capture(name, DType::kF32, Shape::from_dims(dims));
}

// x·Wᵀ (+ h·Rᵀ) for a weight of `rows` rows: MatMul with the transposed
// constant, or Gemm transB=1.
ValueId project(GraphBuilder& b, const CellForm& form, Weights& weights,
                ValueId source, int64_t cols, int64_t rows,
                const std::string& name, uint32_t seed) {
  if (form.product == Product::kGemmTransB) {
    ValueId w = weight(b, form, weights, name, {rows, cols}, seed);
    return b.add("Gemm", {source, w}, {{"transB", Attribute(int64_t{1})}});
  }
  return b.add("MatMul",
               {source, weight(b, form, weights, name, {cols, rows}, seed)});
}

// x·Wᵀ + h·Rᵀ + biases, `gates` gates of H rows; with `gemm_bias` the
// bias is Gemm's C.
ValueId gate_product(GraphBuilder& b, const CellForm& form, Weights& weights,
                     ValueId x, ValueId h, int64_t gates,
                     const std::string& prefix) {
  const int64_t rows = gates * kHidden;
  ValueId wb = weight(b, form, weights, prefix + "Wb", {rows}, 33);
  ValueId xw;
  if (form.gemm_bias) {
    ValueId w = weight(b, form, weights, prefix + "W", {rows, kIn}, 31);
    xw = b.add("Gemm", {x, w, wb}, {{"transB", Attribute(int64_t{1})}});
  } else {
    xw = project(b, form, weights, x, kIn, rows, prefix + "W", 31);
  }
  ValueId hr = project(b, form, weights, h, kHidden, rows, prefix + "R", 32);
  ValueId sum = form.gemm_bias    ? b.add("Add", {hr, xw})
                : form.bias_first ? b.add("Add", {hr, b.add("Add", {xw, wb})})
                                  : b.add("Add", {wb, b.add("Add", {xw, hr})});
  if (form.two_biases) {
    sum = b.add("Add",
                {sum, weight(b, form, weights, prefix + "Rb", {rows}, 34)});
  }
  return sum;
}

// `whole` cut into `parts` gates of H along its last axis.
std::vector<ValueId> cut(GraphBuilder& b, const CellForm& form, ValueId whole,
                         int64_t parts) {
  const int64_t axis = form.batch > 0 ? 1 : 0;
  if (form.cut == Cut::kSlices) {
    std::vector<ValueId> out;
    for (int64_t k = 0; k < parts; ++k) {
      out.push_back(b.add("Slice", {whole, ints(b, "starts", {k * kHidden}),
                                    ints(b, "ends", {(k + 1) * kHidden}),
                                    ints(b, "axes", {-1})}));
    }
    return out;
  }
  if (form.cut == Cut::kSplitInput) {
    return b.add_node(
        "Split",
        {whole, ints(b, "sizes", std::vector<int64_t>(parts, kHidden))},
        {{"axis", Attribute(int64_t{-1})}}, parts);
  }
  return b.add_node("Split", {whole}, {{"axis", Attribute(axis)}}, parts);
}

// The pass's notes on `graph`.
PassNotes notes_of(Graph graph) {
  Result<std::vector<PassStats>> stats =
      run_passes(graph, {infer_shapes_pass(), lift_scan_recurrences_pass()});
  EXPECT_TRUE(stats.is_ok()) << stats.status().to_string();
  return stats.is_ok() ? stats->back().notes : PassNotes();
}

std::shared_ptr<Graph> shared(GraphBuilder&& b) {
  return std::make_shared<Graph>(build_or_die(std::move(b)));
}

// The Scan around `body` over x, states named `states`, with the weights.
Graph scan_graph(const CellForm& form, std::shared_ptr<Graph> body,
                 const Weights& weights, const std::vector<std::string>& states,
                 const std::string& name) {
  GraphBuilder b("scan_" + name);
  std::vector<ValueId> inputs;
  std::vector<std::string> output_names;
  for (const std::string& s : states) {
    inputs.push_back(
        b.input(s + "0", DType::kF32, batched(form.batch, kHidden)));
    output_names.push_back(s + "_last");
  }
  inputs.push_back(b.input("x", DType::kF32, sequence(form.batch, kIn)));
  if (form.scan_output) output_names.push_back("y");
  if (!form.body_weights) {
    for (const auto& [wname, tensor] : weights.tensors) {
      if (form.runtime_weight && wname.find('W') != std::string::npos &&
          wname.find("b") == std::string::npos) {
        b.input(wname, DType::kF32, tensor.shape());
      } else {
        b.constant(wname, tensor);
      }
    }
  }
  std::vector<ValueId> outs = b.add_node(
      "Scan", inputs,
      {{"body", std::move(body)}, {"num_scan_inputs", int64_t{1}}},
      output_names.size(), NodeOptions{name, kOnnxDomain, output_names});
  for (ValueId out : outs) b.output(out);
  return build_or_die(std::move(b));
}

std::map<std::string, Tensor> feeds(const Graph& graph,
                                    const Weights& weights) {
  std::map<std::string, Tensor> out;
  uint32_t seed = 40;
  for (ValueId id : graph.inputs) {
    const Value& v = graph.value(id);
    if (weights.tensors.count(v.name)) {
      out[v.name] = weights.tensors.at(v.name);
      continue;
    }
    std::vector<int64_t> dims;
    for (const Dim& d : v.shape->dims()) {
      dims.push_back(d.is_fixed() ? d.value() : kSteps);
    }
    out[v.name] = random_tensor(dims, seed++);
  }
  return out;
}

// ---- LSTM ----

struct LstmForm : CellForm {
  // The gates' order in the product: ONNX's i, o, f, c or PyTorch's
  // i, f, g, o.
  bool pytorch_order = false;
  bool cell_state_first = false;  // states (c, h)
  bool per_gate = false;          // four W, four R, four biases
  int doublings = 0;              // the gate product added to itself
};

Graph lstm_graph(const LstmForm& form, Weights& weights) {
  GraphBuilder b("lstm_step");
  ValueId h, c;
  if (form.cell_state_first) {
    c = b.input("c_prev", DType::kF32, batched(form.batch, kHidden));
    h = b.input("h_prev", DType::kF32, batched(form.batch, kHidden));
  } else {
    h = b.input("h_prev", DType::kF32, batched(form.batch, kHidden));
    c = b.input("c_prev", DType::kF32, batched(form.batch, kHidden));
  }
  ValueId x = b.input("x_t", DType::kF32, batched(form.batch, kIn));
  std::vector<ValueId> parts;
  if (form.per_gate) {
    for (const char* g : {"i", "o", "f", "c"}) {
      parts.push_back(gate_product(b, form, weights, x, h, 1, g));
    }
  } else {
    ValueId gates = gate_product(b, form, weights, x, h, 4, "");
    for (int k = 0; k < form.doublings; ++k) {
      gates = b.add("Add", {gates, gates});
    }
    parts = cut(b, form, gates, 4);
  }
  ValueId i_pre = parts[0], o_pre = parts[1], f_pre = parts[2],
          g_pre = parts[3];
  if (form.pytorch_order) {
    f_pre = parts[1];
    g_pre = parts[2];
    o_pre = parts[3];
  }
  ValueId i = b.add("Sigmoid", {i_pre});
  ValueId f = b.add("Sigmoid", {f_pre});
  ValueId o = b.add("Sigmoid", {o_pre});
  ValueId g = b.add(form.wrong_activation ? "Relu" : "Tanh", {g_pre});
  ValueId c_new = b.add("Add", {b.add("Mul", {g, i}), b.add("Mul", {c, f})});
  ValueId h_new =
      b.add("Mul", {b.add("Tanh", {form.wrong_wiring ? c : c_new}), o});
  if (form.cell_state_first) {
    b.output(c_new, "c");
    b.output(h_new, "h");
  } else {
    b.output(h_new, "h");
    b.output(c_new, "c");
  }
  if (form.scan_output) b.output(b.add("Identity", {h_new}), "y_t");
  return scan_graph(form, shared(std::move(b)), weights,
                    form.cell_state_first ? std::vector<std::string>{"c", "h"}
                                          : std::vector<std::string>{"h", "c"},
                    "lstm");
}

void expect_lstm_lift(const LstmForm& form) {
  Weights weights;
  Graph graph = lstm_graph(form, weights);
  Graph lifted = expect_fused(graph, lift_scan_recurrences_pass(), "LSTM", 1,
                              feeds(graph, weights));
  EXPECT_EQ(count_ops(lifted, "Scan"), 0u);
}

void expect_lstm_stays(const LstmForm& form) {
  Weights weights;
  Graph graph = lstm_graph(form, weights);
  expect_unchanged(graph, lift_scan_recurrences_pass());
  // Refused by the recogniser, not only by the check.
  EXPECT_TRUE(notes_of(graph).empty());
}

TEST(LiftRnnCells, LstmAsScanModelsWritesIt) { expect_lstm_lift(LstmForm{}); }

TEST(LiftRnnCells, LstmInPyTorchGateOrder) {
  LstmForm form;
  form.pytorch_order = true;
  expect_lstm_lift(form);
  form.cell_state_first = true;
  expect_lstm_lift(form);
}

TEST(LiftRnnCells, LstmCutBySplitSizesOrSlices) {
  LstmForm form;
  form.cut = Cut::kSplitInput;
  expect_lstm_lift(form);
  form.cut = Cut::kSlices;
  form.pytorch_order = true;
  expect_lstm_lift(form);
}

TEST(LiftRnnCells, LstmWithGemmAndTwoBiases) {
  LstmForm form;
  form.product = Product::kGemmTransB;
  form.two_biases = true;
  form.bias_first = true;
  form.batch = 3;
  expect_lstm_lift(form);
}

TEST(LiftRnnCells, LstmWithGemmBiasOrPerGateProducts) {
  LstmForm form;
  form.gemm_bias = true;
  form.two_biases = true;
  form.cut = Cut::kSlices;
  expect_lstm_lift(form);
  form = LstmForm{};
  form.per_gate = true;
  form.product = Product::kGemmTransB;
  expect_lstm_lift(form);
}

TEST(LiftRnnCells, LstmWithoutBatchAxisOrScanOutput) {
  LstmForm form;
  form.batch = 0;
  form.body_weights = true;
  expect_lstm_lift(form);
  form.batch = 2;
  form.scan_output = false;
  expect_lstm_lift(form);
}

TEST(LiftRnnCells, LstmLiftIsNoted) {
  Weights weights;
  PassNotes notes = notes_of(lstm_graph(LstmForm{}, weights));
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0], "Scan 'lstm' -> LSTM (batch 1, input 5, hidden 4)");
}

TEST(LiftRnnCells, LstmWithReluCandidateStays) {
  LstmForm form;
  form.wrong_activation = true;
  expect_lstm_stays(form);
}

TEST(LiftRnnCells, LstmWithRunTimeWeightStays) {
  LstmForm form;
  form.runtime_weight = true;
  expect_lstm_stays(form);
}

// H' = σ(o)·tanh(C), the old cell state: not an LSTM.
TEST(LiftRnnCells, LstmReadingTheOldCellStays) {
  LstmForm form;
  form.wrong_wiring = true;
  expect_lstm_stays(form);
}

// 2^40 paths to the weights if the reader followed each: it reads each
// value once and gives up past its depth.
TEST(LiftRnnCells, LstmWithADeepSumStays) {
  LstmForm form;
  form.doublings = 40;
  expect_lstm_stays(form);
}

// ---- GRU ----

struct GruForm : CellForm {
  bool linear_before_reset = true;  // PyTorch's form
  bool pytorch_order = true;        // r, z, n; else z, r, n
  bool moved_update = false;        // H' = n + z·(H − n)
};

Graph gru_graph(const GruForm& form, Weights& weights) {
  GraphBuilder b("gru_step");
  ValueId h = b.input("h_prev", DType::kF32, batched(form.batch, kHidden));
  ValueId x = b.input("x_t", DType::kF32, batched(form.batch, kIn));
  // x·Wᵀ + bW, cut into three; h·Rᵀ + bR, cut into three (two when n
  // reads σ(r)·H itself).
  const int64_t h_gates = form.linear_before_reset ? 3 : 2;
  ValueId xw =
      b.add("Add", {project(b, form, weights, x, kIn, 3 * kHidden, "W", 51),
                    weight(b, form, weights, "Wb", {3 * kHidden}, 52)});
  ValueId hr = b.add(
      "Add", {project(b, form, weights, h, kHidden, h_gates * kHidden, "R", 53),
              weight(b, form, weights, "Rb", {h_gates * kHidden}, 54)});
  std::vector<ValueId> xs = cut(b, form, xw, 3);
  std::vector<ValueId> hs = cut(b, form, hr, h_gates);
  const int rk = form.pytorch_order ? 0 : 1, zk = 1 - rk;
  ValueId r = b.add("Sigmoid", {b.add("Add", {xs[rk], hs[rk]})});
  ValueId z = b.add("Sigmoid", {b.add("Add", {hs[zk], xs[zk]})});
  ValueId n_pre;
  if (form.linear_before_reset) {
    n_pre = b.add("Add", {xs[2], b.add("Mul", {r, hs[2]})});
  } else {
    ValueId rh = b.add("Mul", {h, r});
    ValueId rn =
        b.add("Add", {project(b, form, weights, rh, kHidden, kHidden, "Rn", 55),
                      weight(b, form, weights, "Rnb", {kHidden}, 56)});
    n_pre = b.add("Add", {rn, xs[2]});
  }
  ValueId n = b.add(form.wrong_activation ? "Relu" : "Tanh", {n_pre});
  ValueId h_new;
  if (form.moved_update) {
    h_new = b.add("Add", {b.add("Mul", {b.add("Sub", {h, n}), z}), n});
  } else {
    ValueId one = b.constant("one", Tensor::scalar<float>(1.0f));
    ValueId keep = b.add("Mul", {form.wrong_wiring ? r : z, h});
    h_new = b.add("Add", {b.add("Mul", {n, b.add("Sub", {one, z})}), keep});
  }
  b.output(h_new, "h");
  if (form.scan_output) b.output(b.add("Identity", {h_new}), "y_t");
  return scan_graph(form, shared(std::move(b)), weights, {"h"}, "gru");
}

void expect_gru_lift(const GruForm& form) {
  Weights weights;
  Graph graph = gru_graph(form, weights);
  Graph lifted = expect_fused(graph, lift_scan_recurrences_pass(), "GRU", 1,
                              feeds(graph, weights));
  EXPECT_EQ(count_ops(lifted, "Scan"), 0u);
  for (const Node& node : lifted.nodes) {
    if (node.op != "GRU") continue;
    EXPECT_EQ(node.attr("linear_before_reset")->as_int(),
              form.linear_before_reset ? 1 : 0);
  }
}

void expect_gru_stays(const GruForm& form) {
  Weights weights;
  Graph graph = gru_graph(form, weights);
  expect_unchanged(graph, lift_scan_recurrences_pass());
  // Refused by the recogniser, not only by the check.
  EXPECT_TRUE(notes_of(graph).empty());
}

TEST(LiftRnnCells, GruAsPyTorchWritesIt) { expect_gru_lift(GruForm{}); }

TEST(LiftRnnCells, GruInOnnxDefaultForm) {
  GruForm form;
  form.linear_before_reset = false;
  form.pytorch_order = false;
  expect_gru_lift(form);
  form.cut = Cut::kSlices;
  form.batch = 0;
  expect_gru_lift(form);
}

TEST(LiftRnnCells, GruWithMovedUpdateAndGemm) {
  GruForm form;
  form.moved_update = true;
  form.product = Product::kGemmTransB;
  form.cut = Cut::kSplitInput;
  form.batch = 2;
  form.scan_output = false;
  expect_gru_lift(form);
}

TEST(LiftRnnCells, GruLiftIsNoted) {
  Weights weights;
  PassNotes notes = notes_of(gru_graph(GruForm{}, weights));
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0],
            "Scan 'gru' -> GRU (batch 1, input 5, hidden 4, "
            "linear_before_reset 1)");
}

TEST(LiftRnnCells, GruWithReluCandidateStays) {
  GruForm form;
  form.wrong_activation = true;
  expect_gru_stays(form);
}

TEST(LiftRnnCells, GruWithRunTimeWeightStays) {
  GruForm form;
  form.runtime_weight = true;
  expect_gru_stays(form);
}

// H' = (1 − z)·n + r·H: the reset gate where the update gate belongs.
TEST(LiftRnnCells, GruKeepingByTheResetGateStays) {
  GruForm form;
  form.wrong_wiring = true;
  expect_gru_stays(form);
}

}  // namespace
}  // namespace seqrt
