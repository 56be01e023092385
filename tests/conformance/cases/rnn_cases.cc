// RNN, GRU and LSTM cases (ops/rnn/): hidden sizes off the vector width and
// past the CPU kernel's 64-unit blocks, batch > 1, long sequences, every
// direction, sequence_lens, layout 1, clip, non-default activations,
// peepholes, both GRU reset forms, outputs left off, and bad nodes.
#include <string>

#include "tests/conformance/op_case.h"

namespace seqrt {
namespace {

struct RnnShape {
  int64_t seq = 5, batch = 3, input = 7, hidden = 37;
  std::string direction = "forward";
  int64_t layout = 0;
  bool bias = true, initial = true, peepholes = false;
  std::vector<int32_t> lens;  // empty: no sequence_lens
  size_t outputs = 0;         // 0: all of the op's outputs
  DType dtype = DType::kF32;
};

OpCase rnn_case(const std::string& op, const std::string& name,
                const RnnShape& s, AttrMap attrs = {}) {
  const uint64_t seed = std::hash<std::string>{}(op + name);
  const int64_t gates = op == "LSTM" ? 4 : (op == "GRU" ? 3 : 1);
  const int64_t dirs = s.direction == "bidirectional" ? 2 : 1;
  const int64_t h = s.hidden;
  std::vector<int64_t> x_dims = {s.seq, s.batch, s.input};
  std::vector<int64_t> state = {dirs, s.batch, h};
  if (s.layout == 1) {
    x_dims = {s.batch, s.seq, s.input};
    state = {s.batch, dirs, h};
  }
  std::vector<Tensor> inputs = {
      random_tensor(s.dtype, x_dims, seed),
      random_tensor(s.dtype, {dirs, gates * h, s.input}, seed + 1, -0.4, 0.4),
      random_tensor(s.dtype, {dirs, gates * h, h}, seed + 2, -0.4, 0.4),
      s.bias ? random_tensor(s.dtype, {dirs, 2 * gates * h}, seed + 3)
             : Tensor(),
      s.lens.empty() ? Tensor()
                     : Tensor::from_vector<int32_t>(
                           {static_cast<int64_t>(s.lens.size())}, s.lens),
      s.initial ? random_tensor(s.dtype, state, seed + 4) : Tensor()};
  if (op == "LSTM") {
    inputs.push_back(s.initial ? random_tensor(s.dtype, state, seed + 5)
                               : Tensor());
    inputs.push_back(s.peepholes
                         ? random_tensor(s.dtype, {dirs, 3 * h}, seed + 6)
                         : Tensor());
  }
  while (!inputs.empty() && inputs.back().empty()) inputs.pop_back();
  attrs["hidden_size"] = h;
  attrs["direction"] = s.direction;
  if (s.layout) attrs["layout"] = s.layout;
  size_t outputs = s.outputs ? s.outputs : (op == "LSTM" ? 3 : 2);
  OpCase c = make_case(op, name, std::move(inputs), std::move(attrs), outputs);
  // f32 kernels against the fp64 reference over hundreds of steps.
  return loosened(std::move(c), s.dtype == DType::kF32 ? 1e-4 : 2e-2);
}

// Cases every op gets: directions, lengths, layouts, block edges.
void add_common(const std::string& op, std::vector<OpCase>& cases) {
  cases.push_back(rnn_case(op, "forward_h37_b3", RnnShape{}));
  {
    RnnShape s;
    s.hidden = 130;  // three 64-unit blocks' worth, split across threads
    s.batch = 2;
    s.seq = 9;
    cases.push_back(rnn_case(op, "forward_h130", s));
  }
  {
    RnnShape s;
    s.direction = "reverse";
    s.lens = {5, 2, 4};
    cases.push_back(rnn_case(op, "reverse_lens", s));
  }
  {
    RnnShape s;
    s.direction = "bidirectional";
    s.lens = {3, 5, 0};
    s.hidden = 17;
    cases.push_back(rnn_case(op, "bidirectional_lens_with_zero", s));
  }
  {
    RnnShape s;
    s.direction = "bidirectional";
    s.layout = 1;
    s.lens = {4, 5, 1};
    s.hidden = 9;
    cases.push_back(rnn_case(op, "layout1_bidirectional", s));
  }
  {
    RnnShape s;
    s.seq = 300;
    s.batch = 2;
    s.hidden = 20;
    s.input = 5;
    cases.push_back(rnn_case(op, "long_seq300", s));
  }
  {
    RnnShape s;
    s.bias = s.initial = false;
    s.hidden = 8;
    s.batch = 1;
    cases.push_back(rnn_case(op, "no_bias_no_initial_h8", s));
  }
  {
    RnnShape s;
    s.outputs = 1;
    cases.push_back(rnn_case(op, "only_Y", s, {{"clip", 0.3f}}));
  }
  {
    RnnShape s;
    s.dtype = DType::kF16;
    s.hidden = 12;
    cases.push_back(rnn_case(op, "f16", s));
  }
  {
    RnnShape s;
    OpCase bad = rnn_case(op, "bad_R_shape", s);
    bad.inputs[2] = random_tensor(DType::kF32, {1, 4, 5}, 1);
    cases.push_back(expect_failure(std::move(bad)));
    cases.push_back(expect_failure(
        rnn_case(op, "unknown_activation", s,
                 {{"activations",
                   std::vector<std::string>(
                       op == "LSTM" ? 3 : (op == "GRU" ? 2 : 1), "Swish")}})));
  }
}

}  // namespace

void add_rnn_cases(std::vector<OpCase>& cases) {
  add_common("RNN", cases);
  add_common("GRU", cases);
  add_common("LSTM", cases);
  {
    RnnShape s;
    s.direction = "bidirectional";
    cases.push_back(rnn_case(
        "RNN", "relu_and_leaky", s,
        {{"activations", std::vector<std::string>{"Relu", "LeakyRelu"}},
         {"activation_alpha", std::vector<float>{0.2f}}}));
  }
  for (int lbr : {0, 1}) {
    RnnShape s;
    s.direction = "bidirectional";
    s.hidden = 70;
    s.lens = {5, 3, 1};
    cases.push_back(rnn_case("GRU", "lbr" + std::to_string(lbr) + "_h70", s,
                             {{"linear_before_reset", lbr}, {"clip", 0.8f}}));
  }
  {
    RnnShape s;
    cases.push_back(rnn_case(
        "GRU", "hardsigmoid_softsign", s,
        {{"activations", std::vector<std::string>{"HardSigmoid", "Softsign"}},
         {"linear_before_reset", 1}}));
  }
  {
    RnnShape s;
    s.peepholes = true;
    s.direction = "bidirectional";
    s.lens = {5, 4, 2};
    cases.push_back(rnn_case("LSTM", "peepholes_clip", s, {{"clip", 0.5f}}));
  }
  {
    RnnShape s;
    s.peepholes = true;
    s.hidden = 70;
    cases.push_back(
        rnn_case("LSTM", "input_forget_h70", s, {{"input_forget", 1}}));
  }
  {
    RnnShape s;
    s.direction = "reverse";
    cases.push_back(rnn_case(
        "LSTM", "activations_with_alpha_beta", s,
        {{"activations",
          std::vector<std::string>{"HardSigmoid", "ScaledTanh", "Elu"}},
         {"activation_alpha", std::vector<float>{0.3f, 0.9f, 0.5f}},
         {"activation_beta", std::vector<float>{0.45f, 1.1f}}}));
  }
  {
    RnnShape s;
    s.outputs = 2;
    s.layout = 1;
    cases.push_back(rnn_case("LSTM", "layout1_Y_and_Y_h", s));
  }
}

}  // namespace seqrt
