#include <gtest/gtest.h>

#include "compiler/infer/infer_graph.h"
#include "graph/builder.h"
#include "ops/op_test_util.h"

namespace seqrt {
namespace {

using op_testing::infer_op;
using op_testing::iota;
using op_testing::run_op;
using op_testing::sym;
using op_testing::typed;
using op_testing::values_of;

TEST(Shape, GivesDimsWithStartAndEnd) {
  Tensor x = iota(DType::kBool, {2, 3, 4});
  auto all = run_op("Shape", {x});
  ASSERT_TRUE(all.is_ok());
  EXPECT_EQ((*all)[0].dtype(), DType::kI64);
  EXPECT_EQ(values_of((*all)[0]), (std::vector<double>{2, 3, 4}));
  auto tail = run_op("Shape", {x}, {{"start", Attribute(-2)}});
  ASSERT_TRUE(tail.is_ok());
  EXPECT_EQ(values_of((*tail)[0]), (std::vector<double>{3, 4}));
  auto clamped =
      run_op("Shape", {x}, {{"start", Attribute(1)}, {"end", Attribute(100)}});
  ASSERT_TRUE(clamped.is_ok());
  EXPECT_EQ(values_of((*clamped)[0]), (std::vector<double>{3, 4}));
  auto empty =
      run_op("Shape", {x}, {{"start", Attribute(2)}, {"end", Attribute(1)}});
  ASSERT_TRUE(empty.is_ok());
  EXPECT_EQ((*empty)[0].dims(), (std::vector<int64_t>{0}));
}

TEST(Shape, KnowsItsValueWhenTheDimsAreFixed) {
  auto fixed = infer_op("Shape", {typed(DType::kF32, Shape({2, sym("s"), 4}))},
                        {{"start", Attribute(2)}});
  ASSERT_TRUE(fixed.is_ok());
  EXPECT_EQ(*fixed->outputs[0].shape, Shape({1}));
  ASSERT_FALSE(fixed->values[0].empty());
  EXPECT_EQ(values_of(fixed->values[0]), (std::vector<double>{4}));
  auto symbolic = infer_op("Shape", {typed(DType::kF32, Shape({2, sym("s")}))});
  ASSERT_TRUE(symbolic.is_ok());
  EXPECT_EQ(*symbolic->outputs[0].shape, Shape({2}));
  EXPECT_TRUE(symbolic->values[0].empty());
  auto unknown = infer_op("Shape", {typed(DType::kF32, std::nullopt)});
  ASSERT_TRUE(unknown.is_ok());
  EXPECT_EQ(*unknown->outputs[0].shape, Shape({Dim::unknown()}));
}

// Shape -> Gather -> Concat -> Reshape: each value is known at inference
// time, so the Reshape's output shape is too.
TEST(Shape, ShapeArithmeticChainsInfer) {
  GraphBuilder b("chain");
  ValueId x = b.input("x", DType::kF32, Shape({2, 3, 8}));
  ValueId shape = b.add("Shape", {x});
  ValueId lead =
      b.add("Gather", {shape, b.constant("idx", op_testing::ints({0, 1}))});
  ValueId target =
      b.add("Concat", {lead, b.constant("tail", op_testing::ints({2, -1}))},
            {{"axis", Attribute(0)}});
  ValueId y = b.add("Reshape", {x, target});
  b.output(y);
  Result<Graph> graph = std::move(b).build();
  ASSERT_TRUE(graph.is_ok()) << graph.status().to_string();
  Status status = infer_graph(*graph);
  ASSERT_TRUE(status.is_ok()) << status.to_string();
  EXPECT_EQ(*graph->value(y).shape, Shape({2, 3, 2, 4}));
}

// With symbolic leading dims, the fixed trailing dims still flow through.
TEST(Shape, FixedTailOfASymbolicShapeInfers) {
  GraphBuilder b("tail");
  ValueId x = b.input("x", DType::kF32, Shape({sym("b"), sym("s"), 64}));
  ValueId last = b.add("Shape", {x}, {{"start", Attribute(-1)}});
  ValueId target =
      b.add("Concat",
            {b.constant("lead", op_testing::ints({0, 0, 4})),
             b.add("Constant", {}, {{"value_ints", std::vector<int64_t>{-1}}})},
            {{"axis", Attribute(0)}});
  ValueId heads = b.add("Reshape", {x, target});
  ValueId width = b.add("ConstantOfShape", {last});
  b.output(heads);
  b.output(width);
  Result<Graph> graph = std::move(b).build();
  ASSERT_TRUE(graph.is_ok()) << graph.status().to_string();
  Status status = infer_graph(*graph);
  ASSERT_TRUE(status.is_ok()) << status.to_string();
  EXPECT_EQ(*graph->value(heads).shape, Shape({sym("b"), sym("s"), 4, 16}));
  EXPECT_EQ(*graph->value(width).shape, Shape({64}));
}

}  // namespace
}  // namespace seqrt
