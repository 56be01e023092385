#include <gtest/gtest.h>

#include <cmath>

#include "ops/rnn/rnn_test_util.h"

namespace seqrt {
namespace {

using op_testing::expect_error;
using op_testing::expect_values;
using op_testing::run_op;
using rnn_testing::f64;

double sigmoid(double v) { return 1.0 / (1.0 + std::exp(-v)); }

// H = I = 1; gates i, o, f, c in that order, peepholes i, o, f.
const Tensor kX = f64({1, 1, 1}, {1.0});
const Tensor kW = f64({1, 4, 1}, {0.5, -0.3, 0.8, 0.2});
const Tensor kR = f64({1, 4, 1}, {0.1, 0.4, -0.2, 0.6});
const Tensor kB = f64({1, 8}, {0.1, 0, 0, 0.2, 0, 0.1, 0, 0});
const Tensor kH0 = f64({1, 1, 1}, {0.5});
const Tensor kC0 = f64({1, 1, 1}, {-1.0});
const Tensor kP = f64({1, 3}, {0.3, -0.5, 0.7});

TEST(Lstm, HandComputedWithPeepholes) {
  const double c0 = -1.0;
  double i = sigmoid(0.5 + 0.1 * 0.5 + 0.1 + 0.3 * c0);
  double f = sigmoid(0.8 - 0.2 * 0.5 + 0.7 * c0);
  double g = std::tanh(0.2 + 0.6 * 0.5 + 0.2);
  double c = f * c0 + i * g;
  double o = sigmoid(-0.3 + 0.4 * 0.5 + 0.1 - 0.5 * c);
  double h = o * std::tanh(c);
  auto out = run_op("LSTM", {kX, kW, kR, kB, Tensor(), kH0, kC0, kP}, {}, 3);
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  expect_values((*out)[0], {h}, 1e-12);
  expect_values((*out)[1], {h}, 1e-12);
  expect_values((*out)[2], {c}, 1e-12);
}

TEST(Lstm, InputForgetCouplesTheGatesAndClipBoundsTheGates) {
  // input_forget: f = 1 - i. clip 0.1 bounds the gates' activation inputs
  // but not C on its way into h.
  const double c0 = -1.0;
  auto clip = [](double v) { return std::max(-0.1, std::min(0.1, v)); };
  double i = sigmoid(clip(0.5 + 0.1 * 0.5 + 0.1 + 0.3 * c0));
  double g = std::tanh(clip(0.2 + 0.6 * 0.5 + 0.2));
  double c = (1 - i) * c0 + i * g;
  double o = sigmoid(clip(-0.3 + 0.4 * 0.5 + 0.1 - 0.5 * c));
  double h = o * std::tanh(c);
  auto out = run_op("LSTM", {kX, kW, kR, kB, Tensor(), kH0, kC0, kP},
                    {{"input_forget", 1}, {"clip", 0.1f}}, 3);
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  expect_values((*out)[1], {h}, 1e-7);
  expect_values((*out)[2], {c}, 1e-7);
}

TEST(Lstm, WholeSequenceEqualsChunksAtEverySplit) {
  using rnn_testing::time_slice;
  using rnn_testing::uniform;
  const int64_t seq = 6, batch = 2, in = 3, hidden = 5;
  Tensor x = uniform({seq, batch, in}, 11, 1.0);
  Tensor w = uniform({1, 4 * hidden, in}, 12);
  Tensor r = uniform({1, 4 * hidden, hidden}, 13);
  Tensor b = uniform({1, 8 * hidden}, 14);
  Tensor p = uniform({1, 3 * hidden}, 15);
  auto whole =
      run_op("LSTM", {x, w, r, b, Tensor(), Tensor(), Tensor(), p}, {}, 3);
  ASSERT_TRUE(whole.is_ok()) << whole.status().to_string();
  for (int64_t split = 1; split < seq; ++split) {
    auto first = run_op(
        "LSTM",
        {time_slice(x, 0, split), w, r, b, Tensor(), Tensor(), Tensor(), p}, {},
        3);
    ASSERT_TRUE(first.is_ok());
    auto second = run_op("LSTM",
                         {time_slice(x, split, seq), w, r, b, Tensor(),
                          (*first)[1], (*first)[2], p},
                         {}, 3);
    ASSERT_TRUE(second.is_ok());
    expect_values((*second)[0],
                  op_testing::values_of(time_slice((*whole)[0], split, seq)),
                  1e-12);
    expect_values((*second)[1], op_testing::values_of((*whole)[1]), 1e-12);
    expect_values((*second)[2], op_testing::values_of((*whole)[2]), 1e-12);
  }
}

TEST(Lstm, SequenceLensFreezeTheStateAndZeroTheOutput) {
  using rnn_testing::uniform;
  const int64_t seq = 4, batch = 3, in = 2, hidden = 3;
  Tensor x = uniform({seq, batch, in}, 21, 1.0);
  Tensor w = uniform({2, 4 * hidden, in}, 22);
  Tensor r = uniform({2, 4 * hidden, hidden}, 23);
  Tensor lens = Tensor::from_vector<int32_t>({3}, {4, 2, 0});
  auto out = run_op("LSTM", {x, w, r, Tensor(), lens},
                    {{"direction", "bidirectional"}}, 3);
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  const Tensor& y = (*out)[0];  // (seq, 2, batch, hidden)
  auto y_at = [&](int64_t t, int64_t d, int64_t b, int64_t j) {
    return y.element_f64(((t * 2 + d) * batch + b) * hidden + j);
  };
  for (int64_t j = 0; j < hidden; ++j) {
    for (int64_t d = 0; d < 2; ++d) {
      EXPECT_EQ(y_at(2, d, 1, j), 0.0);  // batch 1 past its length
      EXPECT_EQ(y_at(0, d, 2, j), 0.0);  // batch 2 has length 0
      EXPECT_EQ((*out)[1].element_f64((d * batch + 2) * hidden + j), 0.0);
    }
    // Y_h: forward state after step 1, backward state after step 0.
    EXPECT_EQ((*out)[1].element_f64((0 * batch + 1) * hidden + j),
              y_at(1, 0, 1, j));
    EXPECT_EQ((*out)[1].element_f64((1 * batch + 1) * hidden + j),
              y_at(0, 1, 1, j));
  }
}

TEST(Lstm, OnlyTheCellStateRequested) {
  auto all = run_op("LSTM", {kX, kW, kR, kB, Tensor(), kH0, kC0, kP}, {}, 3);
  auto c_only = rnn_testing::run_with_outputs(
      "LSTM", {kX, kW, kR, kB, Tensor(), kH0, kC0, kP}, {},
      {false, false, true});
  ASSERT_TRUE(all.is_ok() && c_only.is_ok()) << c_only.status().to_string();
  EXPECT_TRUE((*c_only)[0].empty());
  EXPECT_TRUE((*c_only)[1].empty());
  expect_values((*c_only)[2], op_testing::values_of((*all)[2]), 0);
}

TEST(Lstm, ErrorsNameTheExpectedShape) {
  Tensor bad_p = f64({1, 2}, {0, 0});
  expect_error(
      run_op("LSTM", {kX, kW, kR, kB, Tensor(), kH0, kC0, bad_p}, {}, 3)
          .status(),
      {"[LSTM] node 'test'", "P must be", "(1,3)", "got (1,2)"});
  Tensor bad_c = f64({2, 1, 1}, {0, 0});
  expect_error(
      run_op("LSTM", {kX, kW, kR, kB, Tensor(), kH0, bad_c}, {}, 3).status(),
      {"initial_c must be", "(1,1,1)"});
  Tensor w_bidir = f64({2, 4, 1}, {0, 0, 0, 0, 0, 0, 0, 0});
  expect_error(run_op("LSTM", {kX, w_bidir, kR}, {}, 3).status(),
               {"W must be", "(1,4,1)", "got (2,4,1)"});
}

}  // namespace
}  // namespace seqrt
