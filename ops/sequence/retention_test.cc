#include "ops/sequence/retention.h"

#include <gtest/gtest.h>

#include <cmath>

#include "ops/op_test_util.h"

namespace seqrt {
namespace {

using op_testing::expect_error;
using op_testing::expect_values;
using op_testing::f32;

// op_testing::run_op looks ops up in the ONNX domain; Retention is seqrt's.
Result<std::vector<Tensor>> run_retention(const std::vector<Tensor>& inputs,
                                          const AttrMap& attrs) {
  const OpSchema* schema = OpRegistry::global().find(kSeqrtDomain, "Retention");
  if (schema == nullptr) return invalid_argument("Retention not registered");
  std::vector<bool> present;
  std::vector<const Tensor*> args;
  for (const Tensor& t : inputs) {
    present.push_back(!t.empty());
    args.push_back(t.empty() ? nullptr : &t);
  }
  Node node = op_testing::make_node("Retention", attrs, present, 2);
  node.domain = kSeqrtDomain;
  SEQRT_RETURN_IF_ERROR(check_node(node, *schema));
  KernelContext ctx(node, *schema, std::move(args));
  SEQRT_RETURN_IF_ERROR(schema->reference(ctx));
  return std::move(ctx.outputs());
}

std::vector<Tensor> run_ok(const std::vector<Tensor>& inputs,
                           const AttrMap& attrs) {
  auto out = run_retention(inputs, attrs);
  EXPECT_TRUE(out.is_ok()) << out.status().to_string();
  return out.is_ok() ? *out : std::vector<Tensor>(2);
}

AttrMap gamma_attrs(std::vector<float> gammas, float scale = 1.0f) {
  return {{"gammas", Attribute(std::move(gammas))},
          {"scale", Attribute(scale)}};
}

TEST(Retention, RecurrenceByHand) {
  // γ = 0.5: S1 = 2, y1 = 2; S2 = 0.5·2 + 4 = 5, y2 = 5.
  Tensor q = f32({1, 1, 2, 1}, {1, 1});
  Tensor k = f32({1, 1, 2, 1}, {1, 1});
  Tensor v = f32({1, 1, 2, 1}, {2, 4});
  auto out = run_ok({q, k, v}, gamma_attrs({0.5f}));
  expect_values(out[0], {2, 5});
  expect_values(out[1], {5});
}

TEST(Retention, ScaleAppliesToKeysAndState) {
  Tensor q = f32({1, 1, 1, 1}, {1});
  Tensor k = f32({1, 1, 1, 1}, {1});
  Tensor v = f32({1, 1, 1, 1}, {2});
  auto out = run_ok({q, k, v}, gamma_attrs({0.5f}, 0.25f));
  expect_values(out[0], {0.5});
  expect_values(out[1], {0.5});  // the state holds scale·kᵀv
}

TEST(Retention, DefaultGammasAndScale) {
  EXPECT_EQ(default_retention_gamma(0), 1.0 - 1.0 / 32);
  EXPECT_EQ(default_retention_gamma(15), 1.0 - std::ldexp(1.0, -20));
  // Two heads, d_k = 4 (scale 1/2): y_1 = γ_h · q·k v / 2 from token 0.
  Tensor q = f32({1, 2, 2, 4}, {0, 0, 0, 0, 1, 1, 1, 1,  //
                                0, 0, 0, 0, 1, 1, 1, 1});
  Tensor k = f32({1, 2, 2, 4}, {1, 0, 0, 0, 0, 0, 0, 0,  //
                                1, 0, 0, 0, 0, 0, 0, 0});
  Tensor v = f32({1, 2, 2, 1}, {4, 0, 4, 0});
  auto out = run_ok({q, k, v}, {});
  expect_values(out[0], {0, 2 * (1 - 1.0 / 32), 0, 2 * (1 - 1.0 / 64)}, 1e-6);
}

TEST(Retention, PastStateDecaysIntoOutput) {
  // y_t = γ^(t+1) q S_past with zero keys.
  Tensor q = f32({1, 1, 3, 1}, {1, 1, 1});
  Tensor k = f32({1, 1, 3, 1}, {0, 0, 0});
  Tensor v = f32({1, 1, 3, 1}, {0, 0, 0});
  Tensor past = f32({1, 1, 1, 1}, {8});
  auto out = run_ok({q, k, v, past}, gamma_attrs({0.5f}));
  expect_values(out[0], {4, 2, 1});
  expect_values(out[1], {1});
}

TEST(Retention, DifferentKeyAndValueWidths) {
  // d_k = 2, d_v = 3, γ = 1: y = (q·k) v.
  Tensor q = f32({1, 1, 1, 2}, {1, 2});
  Tensor k = f32({1, 1, 1, 2}, {3, 1});
  Tensor v = f32({1, 1, 1, 3}, {1, -1, 2});
  auto out = run_ok({q, k, v}, gamma_attrs({1.0f}));
  expect_values(out[0], {5, -5, 10});
  EXPECT_EQ(out[1].dims(), (std::vector<int64_t>{1, 1, 2, 3}));
}

TEST(Retention, RejectsBadInputs) {
  Tensor q = f32({1, 2, 1, 1}, {1, 1});
  Tensor v = f32({1, 2, 1, 1}, {1, 1});
  expect_error(run_retention({q, q, v}, gamma_attrs({0.5f})).status(),
               {"[Retention]", "gammas must have one value per head (H = 2)"});
  expect_error(run_retention({q, q, v}, gamma_attrs({0.5f, 1.5f})).status(),
               {"gammas must lie in [0, 1]"});
  expect_error(
      run_retention({q, q, f32({1, 2, 2, 1}, {1, 1, 1, 1})}, {}).status(),
      {"input 'V' must be (B,H,T,dv) = (1,2,1,dv)"});
  expect_error(
      run_retention({q, f32({1, 2, 1, 2}, {1, 1, 1, 1}), v}, {}).status(),
      {"input 'K'"});
  expect_error(run_retention({q, q, v, f32({1, 1, 1, 1}, {0})}, {}).status(),
               {"past_state", "(1,2,1,1)"});
  expect_error(
      run_retention({q, q, v}, {{"chunk_size", Attribute(int64_t{-1})}})
          .status(),
      {"chunk_size must be positive"});
}

}  // namespace
}  // namespace seqrt
