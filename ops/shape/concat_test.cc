#include <gtest/gtest.h>

#include "ops/op_test_util.h"

namespace seqrt {
namespace {

using op_testing::f32;
using op_testing::infer_op;
using op_testing::iota;
using op_testing::run_op;
using op_testing::sym;
using op_testing::typed;
using op_testing::values_of;

TEST(Concat, JoinsAlongAxis) {
  Tensor a = f32({2, 1}, {1, 2});
  Tensor b = f32({2, 2}, {3, 4, 5, 6});
  auto out = run_op("Concat", {a, b}, {{"axis", Attribute(-1)}});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].dims(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(values_of((*out)[0]), (std::vector<double>{1, 3, 4, 2, 5, 6}));
  auto rows = run_op("Concat", {b, b, b}, {{"axis", Attribute(0)}});
  ASSERT_TRUE(rows.is_ok());
  EXPECT_EQ((*rows)[0].dims(), (std::vector<int64_t>{6, 2}));
}

TEST(Concat, InfersSymbolicDims) {
  auto out = infer_op("Concat",
                      {typed(DType::kF32, Shape({sym("b"), 3, 4})),
                       typed(DType::kF32, Shape({Dim::unknown(), 5, 4}))},
                      {{"axis", Attribute(1)}});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ(*out->outputs[0].shape, Shape({sym("b"), 8, 4}));
  auto kv = infer_op("Concat",
                     {typed(DType::kF32, Shape({1, sym("past"), 8})),
                      typed(DType::kF32, Shape({1, sym("seq"), 8}))},
                     {{"axis", Attribute(1)}});
  ASSERT_TRUE(kv.is_ok());
  // A KV cache: the symbolic sum (graph/dim_expr.h).
  EXPECT_EQ(*kv->outputs[0].shape, Shape({1, sym("past+seq"), 8}));
}

TEST(Concat, RejectsMismatches) {
  Tensor a = iota(DType::kF32, {2, 2});
  auto dims = run_op("Concat", {a, iota(DType::kF32, {3, 3})},
                     {{"axis", Attribute(0)}});
  ASSERT_FALSE(dims.is_ok());
  EXPECT_NE(dims.status().message().find("[Concat]"), std::string::npos);
  EXPECT_FALSE(
      run_op("Concat", {a, iota(DType::kF64, {2, 2})}, {{"axis", Attribute(0)}})
          .is_ok());
  EXPECT_FALSE(run_op("Concat", {a, a}, {{"axis", Attribute(2)}}).is_ok());
  EXPECT_FALSE(run_op("Concat", {a}).is_ok());  // axis is required
  constexpr int64_t kHuge = int64_t{1} << 62;   // declared, never allocated
  EXPECT_FALSE(infer_op("Concat",
                        {typed(DType::kF32, Shape({kHuge})),
                         typed(DType::kF32, Shape({kHuge}))},
                        {{"axis", Attribute(0)}})
                   .is_ok());
  EXPECT_FALSE(infer_op("Concat",
                        {typed(DType::kF32, Shape({2, 3})),
                         typed(DType::kF32, Shape({2, 4}))},
                        {{"axis", Attribute(0)}})
                   .is_ok());
}

}  // namespace
}  // namespace seqrt
