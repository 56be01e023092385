#include "ops/sequence/linear_attention.h"

#include <gtest/gtest.h>

#include <cmath>

#include "ops/op_test_util.h"

namespace seqrt {
namespace {

using op_testing::expect_error;
using op_testing::expect_values;
using op_testing::f32;

// B = 1, T = 2, one head with d_k = d_v = 1: every rule by hand.
struct Tiny {
  Tensor q = f32({1, 2, 1}, {1, 2});
  Tensor k = f32({1, 2, 1}, {1, 1});
  Tensor v = f32({1, 2, 1}, {3, 4});
  Tensor decay = f32({1, 2, 1}, {std::log(0.5f), std::log(0.5f)});
  Tensor beta = f32({1, 2, 1}, {0.5f, 0.5f});
};

AttrMap attrs_for(const std::string& rule, int64_t q_heads = 1,
                  int64_t kv_heads = 1, float scale = 1.0f) {
  return {{"update_rule", Attribute(rule)},
          {"q_num_heads", Attribute(q_heads)},
          {"kv_num_heads", Attribute(kv_heads)},
          {"scale", Attribute(scale)}};
}

std::vector<Tensor> run2(const std::vector<Tensor>& inputs,
                         const AttrMap& attrs) {
  auto out = op_testing::run_op("LinearAttention", inputs, attrs, 2);
  EXPECT_TRUE(out.is_ok()) << out.status().to_string();
  return out.is_ok() ? *out : std::vector<Tensor>(2);
}

TEST(LinearAttention, LinearRuleByHand) {
  Tiny x;
  auto out = run2({x.q, x.k, x.v}, attrs_for("linear"));
  expect_values(out[0], {3, 14});  // S = 3, 7; o = q S
  expect_values(out[1], {7});
}

TEST(LinearAttention, GatedRuleByHand) {
  Tiny x;
  auto out = run2({x.q, x.k, x.v, Tensor(), x.decay}, attrs_for("gated"));
  expect_values(out[0], {3, 11}, 1e-6);  // S2 = 0.5·3 + 4
  expect_values(out[1], {5.5}, 1e-6);
}

TEST(LinearAttention, DeltaRuleByHand) {
  Tiny x;
  auto out =
      run2({x.q, x.k, x.v, Tensor(), Tensor(), x.beta}, attrs_for("delta"));
  // S1 = 0.5·(3 − 0) = 1.5; S2 = 1.5 + 0.5·(4 − 1.5) = 2.75.
  expect_values(out[0], {1.5, 5.5});
  expect_values(out[1], {2.75});
}

TEST(LinearAttention, GatedDeltaRuleByHand) {
  Tiny x;
  auto out = run2({x.q, x.k, x.v, Tensor(), x.decay, x.beta},
                  attrs_for("gated_delta"));
  // S1 = 1.5; decayed 0.75; S2 = 0.75 + 0.5·(4 − 0.75) = 2.375.
  expect_values(out[0], {1.5, 4.75}, 1e-6);
  expect_values(out[1], {2.375}, 1e-6);
}

TEST(LinearAttention, PerKeyDecayScalesStateRows) {
  // d_k = 2, d_v = 1, one token: S = diag(e^g) S_past + k v.
  Tensor q = f32({1, 1, 2}, {1, 1});
  Tensor k = f32({1, 1, 2}, {0, 0});
  Tensor v = f32({1, 1, 1}, {0});
  Tensor past = f32({1, 1, 2, 1}, {2, 4});
  Tensor decay = f32({1, 1, 2}, {std::log(0.5f), std::log(0.25f)});
  auto out = run2({q, k, v, past, decay}, attrs_for("gated"));
  expect_values(out[1], {1, 1}, 1e-6);
  expect_values(out[0], {2}, 1e-6);
}

TEST(LinearAttention, DefaultScaleIsInverseSqrtDk) {
  // d_k = 4: o = q·k v / 2.
  Tensor q = f32({1, 1, 4}, {1, 1, 1, 1});
  Tensor k = f32({1, 1, 4}, {1, 0, 0, 0});
  Tensor v = f32({1, 1, 1}, {6});
  AttrMap attrs = {{"update_rule", Attribute("linear")},
                   {"q_num_heads", Attribute(int64_t{1})},
                   {"kv_num_heads", Attribute(int64_t{1})}};
  auto out = run2({q, k, v}, attrs);
  expect_values(out[0], {3});
}

TEST(LinearAttention, GroupedQueryHeadsShareTheState) {
  // H_q = 2, H_kv = 1: head 1 reads the same state with its own query.
  Tensor q = f32({1, 1, 2}, {1, -2});
  Tensor k = f32({1, 1, 1}, {1});
  Tensor v = f32({1, 1, 1}, {5});
  auto out = run2({q, k, v}, attrs_for("linear", 2, 1));
  expect_values(out[0], {5, -10});
  EXPECT_EQ(out[1].dims(), (std::vector<int64_t>{1, 1, 1, 1}));
}

TEST(LinearAttention, TwoPartsWithStateEqualWhole) {
  Tensor q = op_testing::iota(DType::kF32, {1, 4, 4});
  Tensor k = f32({1, 4, 4}, {.1f, .2f, .3f, .4f, .5f, .6f, .7f, .8f, .9f, .1f,
                             .2f, .3f, .4f, .5f, .6f, .7f});
  Tensor v = f32({1, 4, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  Tensor decay =
      f32({1, 4, 2}, {-.1f, -.2f, -.3f, -.4f, -.5f, -.6f, -.7f, -.8f});
  Tensor beta = f32({1, 4, 1}, {.5f, .6f, .7f, .8f});
  AttrMap attrs = attrs_for("gated_delta", 2, 2, 0.5f);
  auto whole = run2({q, k, v, Tensor(), decay, beta}, attrs);
  auto half = [](const Tensor& t, int64_t part) {
    int64_t last = t.dim(2);
    std::vector<float> values;
    for (int64_t i = 0; i < 2 * last; ++i) {
      values.push_back(static_cast<float>(t.element_f64(part * 2 * last + i)));
    }
    return f32({1, 2, last}, values);
  };
  auto first = run2({half(q, 0), half(k, 0), half(v, 0), Tensor(),
                     half(decay, 0), half(beta, 0)},
                    attrs);
  auto second = run2({half(q, 1), half(k, 1), half(v, 1), first[1],
                      half(decay, 1), half(beta, 1)},
                     attrs);
  std::vector<double> want = op_testing::values_of(whole[0]);
  std::vector<double> got = op_testing::values_of(first[0]);
  for (double x : op_testing::values_of(second[0])) got.push_back(x);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5);
  expect_values(second[1], op_testing::values_of(whole[1]), 1e-5);
}

TEST(LinearAttention, InfersPackedShapes) {
  using op_testing::typed;
  auto types = op_testing::infer_types(
      "LinearAttention",
      {typed(DType::kF16, Shape({2, op_testing::sym("T"), 64})),
       typed(DType::kF16, Shape({2, op_testing::sym("T"), 32})),
       typed(DType::kF16, Shape({2, op_testing::sym("T"), 48})),
       op_testing::omitted(),
       typed(DType::kF16, Shape({2, op_testing::sym("T"), 4})),
       typed(DType::kF16, Shape({2, op_testing::sym("T"), 4}))},
      {{"q_num_heads", Attribute(int64_t{8})},
       {"kv_num_heads", Attribute(int64_t{4})}},
      2);
  ASSERT_TRUE(types.is_ok()) << types.status().to_string();
  EXPECT_EQ((*types)[0].dtype, DType::kF16);
  EXPECT_EQ((*types)[0].shape->to_string(), "(2,T,96)");
  EXPECT_EQ((*types)[1].shape->to_string(), "(2,4,8,12)");
}

TEST(LinearAttention, RejectsBadInputs) {
  Tiny x;
  auto status = [&](const std::vector<Tensor>& in, const AttrMap& attrs) {
    return op_testing::run_op("LinearAttention", in, attrs, 2).status();
  };
  expect_error(status({x.q, x.k, x.v}, attrs_for("linear", 3, 2)),
               {"[LinearAttention]", "multiple of kv_num_heads"});
  expect_error(status({x.q, x.k, x.v}, attrs_for("gated")),
               {"needs input 'decay'"});
  expect_error(status({x.q, x.k, x.v, Tensor(), x.decay}, attrs_for("delta")),
               {"needs input 'beta'"});
  expect_error(
      status({x.q, f32({1, 2, 2}, {1, 1, 1, 1}), x.v}, attrs_for("linear")),
      {"input 'key' must be (B,T,H_kv*d_k) = (1,2,1)"});
  expect_error(
      status({x.q, x.k, x.v, f32({1, 1, 2, 1}, {0, 0})}, attrs_for("linear")),
      {"past_state", "(1,1,1,1)"});
  expect_error(
      status({x.q, x.k, x.v, Tensor(), f32({1, 2, 3}, {0, 0, 0, 0, 0, 0})},
             attrs_for("gated")),
      {"input 'decay' must be"});
  AttrMap bad_chunk = attrs_for("linear");
  bad_chunk["chunk_size"] = Attribute(int64_t{0});
  expect_error(status({x.q, x.k, x.v}, bad_chunk), {"chunk_size"});
}

}  // namespace
}  // namespace seqrt
