#include <gtest/gtest.h>

#include <cmath>

#include "ops/rnn/rnn_test_util.h"

namespace seqrt {
namespace {

using op_testing::expect_error;
using op_testing::expect_values;
using op_testing::infer_types;
using op_testing::info;
using op_testing::omitted;
using op_testing::run_op;
using op_testing::sym;
using rnn_testing::f64;

TEST(Rnn, ForwardTanhHandComputed) {
  // H = I = 1: h1 = tanh(2·1 + 0.3), h2 = tanh(2·(-1) + 0.5·h1 + 0.3).
  Tensor x = f64({2, 1, 1}, {1, -1});
  Tensor w = f64({1, 1, 1}, {2});
  Tensor r = f64({1, 1, 1}, {0.5});
  Tensor b = f64({1, 2}, {0.1, 0.2});
  auto out = run_op("RNN", {x, w, r, b}, {{"hidden_size", 1}}, 2);
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  double h1 = std::tanh(2.3), h2 = std::tanh(-2 + 0.5 * h1 + 0.3);
  EXPECT_EQ((*out)[0].dims(), (std::vector<int64_t>{2, 1, 1, 1}));
  expect_values((*out)[0], {h1, h2}, 1e-12);
  expect_values((*out)[1], {h2}, 1e-12);
}

TEST(Rnn, ReverseRunsBackwardWithinEachLength) {
  // Affine (identity) activation, W = R = 1: h is a running sum from the
  // end of each batch's length; Y is zero past it.
  Tensor x = f64({3, 2, 1}, {1, 10, 2, 20, 3, 30});
  Tensor one = f64({1, 1, 1}, {1});
  Tensor lens = Tensor::from_vector<int32_t>({2}, {2, 3});
  AttrMap attrs = {{"direction", "reverse"},
                   {"activations", std::vector<std::string>{"Affine"}}};
  auto out = run_op("RNN", {x, one, one, Tensor(), lens}, attrs, 2);
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  expect_values((*out)[0], {3, 60, 2, 50, 0, 30}, 1e-12);
  expect_values((*out)[1], {3, 60}, 1e-12);
}

TEST(Rnn, AlphaBetaAreConsumedByTheActivationsThatUseThem) {
  // Bidirectional with one direction's list: LeakyRelu takes alpha 0.5,
  // HardSigmoid alpha 0.25 and beta 0.1; both directions use them.
  Tensor x = f64({1, 2, 1}, {-2, 1});
  Tensor w = f64({2, 1, 1}, {1, 1});
  Tensor r = f64({2, 1, 1}, {0, 0});
  AttrMap attrs = {
      {"direction", "bidirectional"},
      {"activations", std::vector<std::string>{"LeakyRelu", "hardsigmoid"}},
      {"activation_alpha", std::vector<float>{0.5f, 0.25f}},
      {"activation_beta", std::vector<float>{0.1f}}};
  auto out = run_op("RNN", {x, w, r}, attrs, 2);
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  // Y_h (dirs, batch, 1): forward LeakyRelu, backward HardSigmoid.
  expect_values((*out)[1], {-1.0, 1.0, 0.0, 0.35}, 1e-7);
}

TEST(Rnn, EveryActivationAndItsDefaults) {
  struct Case {
    const char* name;
    double x, want;
  };
  const double e = std::exp(1.0);
  const Case cases[] = {{"Relu", -1, 0},
                        {"Tanh", 1, std::tanh(1.0)},
                        {"Sigmoid", 1, 1 / (1 + 1 / e)},
                        {"Affine", 2, 2},
                        {"LeakyRelu", -1, -0.01},
                        {"ThresholdedRelu", 1, 0},
                        {"ThresholdedRelu", 1.5, 1.5},
                        {"ScaledTanh", 1, std::tanh(1.0)},
                        {"HardSigmoid", 1, 0.7},
                        {"Elu", -1, 1 / e - 1},
                        {"Softsign", 1, 0.5},
                        {"Softplus", 1, std::log(1 + e)}};
  for (const Case& c : cases) {
    Tensor x = f64({1, 1, 1}, {c.x});
    Tensor w = f64({1, 1, 1}, {1});
    Tensor r = f64({1, 1, 1}, {0});
    AttrMap attrs = {{"activations", std::vector<std::string>{c.name}}};
    auto out = run_op("RNN", {x, w, r}, attrs, 1);
    ASSERT_TRUE(out.is_ok()) << c.name << ": " << out.status().to_string();
    expect_values((*out)[0], {c.want}, 1e-6);
  }
}

TEST(Rnn, ClipBoundsTheActivationInput) {
  Tensor x = f64({1, 1, 1}, {3});
  Tensor w = f64({1, 1, 1}, {1});
  Tensor r = f64({1, 1, 1}, {0});
  AttrMap attrs = {{"clip", 0.5f},
                   {"activations", std::vector<std::string>{"Affine"}}};
  auto out = run_op("RNN", {x, w, r}, attrs, 1);
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  expect_values((*out)[0], {0.5}, 1e-7);
}

TEST(Rnn, LayoutOneIsLayoutZeroTransposed) {
  using rnn_testing::uniform;
  const int64_t seq = 3, batch = 2, in = 2, hidden = 3;
  Tensor x0 = uniform({seq, batch, in}, 1);
  Tensor x1 = Tensor::allocate(DType::kF64, {batch, seq, in}).value();
  for (int64_t t = 0; t < seq; ++t)
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t i = 0; i < in; ++i)
        x1.set_element_f64((b * seq + t) * in + i,
                           x0.element_f64((t * batch + b) * in + i));
  Tensor w = uniform({2, hidden, in}, 2), r = uniform({2, hidden, hidden}, 3);
  AttrMap attrs = {{"direction", "bidirectional"}};
  auto a = run_op("RNN", {x0, w, r}, attrs, 2);
  attrs["layout"] = 1;
  auto b = run_op("RNN", {x1, w, r}, attrs, 2);
  ASSERT_TRUE(a.is_ok() && b.is_ok());
  EXPECT_EQ((*b)[0].dims(), (std::vector<int64_t>{batch, seq, 2, hidden}));
  EXPECT_EQ((*b)[1].dims(), (std::vector<int64_t>{batch, 2, hidden}));
  // Y (seq, dirs, batch, H) against (batch, seq, dirs, H).
  for (int64_t t = 0; t < seq; ++t)
    for (int64_t d = 0; d < 2; ++d)
      for (int64_t bi = 0; bi < batch; ++bi)
        for (int64_t j = 0; j < hidden; ++j)
          EXPECT_DOUBLE_EQ(
              (*a)[0].element_f64(((t * 2 + d) * batch + bi) * hidden + j),
              (*b)[0].element_f64(((bi * seq + t) * 2 + d) * hidden + j));
}

TEST(Rnn, InferenceKeepsSymbolicDimsAndLayout) {
  auto types = infer_types(
      "RNN",
      {info(DType::kF32, Shape({sym("seq"), sym("batch"), 4})),
       info(DType::kF32, Shape({1, 8, 4})), info(DType::kF32, std::nullopt)},
      {}, 2);
  ASSERT_TRUE(types.is_ok()) << types.status().to_string();
  EXPECT_EQ((*types)[0].shape->to_string(), "(seq,1,batch,8)");
  EXPECT_EQ((*types)[1].shape->to_string(), "(1,batch,8)");
  types = infer_types("RNN",
                      {info(DType::kF16, Shape({sym("batch"), sym("seq"), 4})),
                       info(DType::kF16, Shape({2, 8, 4})),
                       info(DType::kF16, Shape({2, 8, 8}))},
                      {{"layout", 1}, {"direction", "bidirectional"}}, 2);
  ASSERT_TRUE(types.is_ok()) << types.status().to_string();
  EXPECT_EQ((*types)[0].shape->to_string(), "(batch,seq,2,8)");
  EXPECT_EQ((*types)[1].dtype, DType::kF16);
}

TEST(Rnn, ErrorsNameTheNodeAndTheExpectedShape) {
  Tensor x = f64({2, 1, 3}, {1, 2, 3, 4, 5, 6});
  Tensor w = f64({1, 2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor r = f64({1, 2, 2}, {1, 2, 3, 4});
  Tensor bad_w = f64({1, 2, 2}, {1, 2, 3, 4});
  expect_error(run_op("RNN", {x, bad_w, r}, {}, 1).status(),
               {"[RNN] node 'test'", "W must be", "(1,2,3)", "got (1,2,2)"});
  expect_error(run_op("RNN", {x, w, r}, {{"hidden_size", 3}}, 1).status(),
               {"[RNN]", "W must be", "(1,3,3)"});
  expect_error(run_op("RNN", {x, w, r},
                      {{"activations", std::vector<std::string>{"Swish"}}}, 1)
                   .status(),
               {"[RNN]", "unknown activation 'Swish'"});
  expect_error(
      run_op("RNN", {x, w, r},
             {{"activations", std::vector<std::string>{"Tanh", "Tanh"}}}, 1)
          .status(),
      {"activations must list 1 names"});
  expect_error(
      run_op("RNN", {x, w, r}, {{"direction", "sideways"}}, 1).status(),
      {"direction", "sideways", "bidirectional"});
  expect_error(run_op("RNN", {x, w, r}, {{"layout", 2}}, 1).status(),
               {"layout must be 0 or 1"});
  Tensor lens = Tensor::from_vector<int32_t>({1}, {3});
  expect_error(run_op("RNN", {x, w, r, Tensor(), lens}, {}, 1).status(),
               {"sequence_lens[0] = 3 is outside [0, 2]"});
  Tensor h0 = f64({1, 2, 2}, {0, 0, 0, 0});
  expect_error(run_op("RNN", {x, w, r, Tensor(), Tensor(), h0}, {}, 1).status(),
               {"initial_h must be", "(1,1,2)", "got (1,2,2)"});
  Tensor x32 = Tensor::from_vector<float>({2, 1, 3}, {1, 2, 3, 4, 5, 6});
  expect_error(run_op("RNN", {x32, w, r}, {}, 1).status(),
               {"W must have X's dtype f32, got f64"});
}

TEST(Rnn, AbsentOutputsAreLeftOut) {
  Tensor x = f64({2, 1, 1}, {1, -1});
  Tensor w = f64({1, 1, 1}, {2});
  Tensor r = f64({1, 1, 1}, {0.5});
  auto out = rnn_testing::run_with_outputs("RNN", {x, w, r}, {}, {false, true});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_TRUE((*out)[0].empty());
  double h1 = std::tanh(2.0);
  expect_values((*out)[1], {std::tanh(-2 + 0.5 * h1)}, 1e-12);
}

}  // namespace
}  // namespace seqrt
