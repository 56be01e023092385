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

// H = I = 1; gates z, r, h in that order.
const Tensor kX = f64({1, 1, 1}, {0.7});
const Tensor kW = f64({1, 3, 1}, {0.5, -0.4, 0.9});
const Tensor kR = f64({1, 3, 1}, {0.3, 0.2, -0.6});
const Tensor kB = f64({1, 6}, {0.1, 0.2, 0.3, 0.05, -0.1, 0.4});
const Tensor kH0 = f64({1, 1, 1}, {-0.5});

TEST(Gru, HandComputedBothResetForms) {
  const double x = 0.7, h0 = -0.5;
  double z = sigmoid(0.5 * x + 0.3 * h0 + 0.1 + 0.05);
  double r = sigmoid(-0.4 * x + 0.2 * h0 + 0.2 - 0.1);
  double reset_first = std::tanh(0.9 * x + -0.6 * (r * h0) + 0.4 + 0.3);
  double linear_first = std::tanh(0.9 * x + 0.3 + r * (-0.6 * h0 + 0.4));
  for (int lbr : {0, 1}) {
    auto out = run_op("GRU", {kX, kW, kR, kB, Tensor(), kH0},
                      {{"linear_before_reset", lbr}}, 2);
    ASSERT_TRUE(out.is_ok()) << out.status().to_string();
    double hh = lbr ? linear_first : reset_first;
    double h = (1 - z) * hh + z * h0;
    expect_values((*out)[0], {h}, 1e-12);
    expect_values((*out)[1], {h}, 1e-12);
  }
}

TEST(Gru, WholeSequenceEqualsTwoChunks) {
  using rnn_testing::time_slice;
  using rnn_testing::uniform;
  const int64_t seq = 7, batch = 2, in = 3, hidden = 4;
  Tensor x = uniform({seq, batch, in}, 1, 1.0);
  Tensor w = uniform({1, 3 * hidden, in}, 2);
  Tensor r = uniform({1, 3 * hidden, hidden}, 3);
  Tensor b = uniform({1, 6 * hidden}, 4);
  Tensor h0 = uniform({1, batch, hidden}, 5, 1.0);
  auto whole = run_op("GRU", {x, w, r, b, Tensor(), h0}, {}, 2);
  ASSERT_TRUE(whole.is_ok()) << whole.status().to_string();
  for (int64_t split : {1, 3, 6}) {
    auto first =
        run_op("GRU", {time_slice(x, 0, split), w, r, b, Tensor(), h0}, {}, 2);
    auto second = run_op(
        "GRU", {time_slice(x, split, seq), w, r, b, Tensor(), (*first)[1]}, {},
        2);
    ASSERT_TRUE(first.is_ok() && second.is_ok());
    Tensor y = (*whole)[0];
    std::vector<double> want = op_testing::values_of(time_slice(y, split, seq));
    expect_values((*second)[0], want, 1e-12);
    expect_values((*second)[1], op_testing::values_of((*whole)[1]), 1e-12);
  }
}

TEST(Gru, ErrorsNameTheExpectedShape) {
  Tensor bad_b = f64({1, 3}, {0, 0, 0});
  expect_error(run_op("GRU", {kX, kW, kR, bad_b}, {}, 2).status(),
               {"[GRU] node 'test'", "B must be", "(1,6)", "got (1,3)"});
  Tensor bad_r = f64({1, 2, 1}, {0, 0});
  expect_error(run_op("GRU", {kX, kW, bad_r}, {}, 2).status(),
               {"[GRU]", "R must be"});
  expect_error(run_op("GRU", {kX, kW, kR},
                      {{"activations", std::vector<std::string>{"Sigmoid"}}}, 2)
                   .status(),
               {"activations must list 2 names (2 per direction), got 1"});
}

}  // namespace
}  // namespace seqrt
