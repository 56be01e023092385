#include <gtest/gtest.h>

#include "compiler/passes/pass_test_util.h"

namespace seqrt {
namespace {

using pass_testing::apply;
using pass_testing::build_or_die;
using pass_testing::expect_close;
using pass_testing::random_tensor;
using pass_testing::run_reference;

ValueId ints(GraphBuilder& b, const std::string& name,
             std::vector<int64_t> values) {
  int64_t size = static_cast<int64_t>(values.size());
  return b.constant(name, Tensor::from_vector<int64_t>({size}, values));
}

// Dim `index` of x as a one-element vector, the way dynamic exports
// compute it: Unsqueeze(Gather(Shape(x), index), [0]).
ValueId dim_of(GraphBuilder& b, ValueId shape, int64_t index) {
  static int count = 0;
  std::string tag = std::to_string(count++);
  ValueId i = b.constant("index" + tag, Tensor::scalar(index));
  ValueId dim = b.add("Gather", {shape, i}, {{"axis", Attribute(0)}});
  return b.add("Unsqueeze", {dim, ints(b, "axes" + tag, {0})});
}

// x (batch, seq, 32) viewed as (batch, seq, 4, 8) with the shape computed at
// run time, then unsqueezed and expanded to (batch, seq, 2, 4, 8) by a
// Where(Equal(shape, -1), 1, shape) shape as torch exports repeat_kv.
Graph dynamic_graph() {
  GraphBuilder b("dyn");
  ValueId x =
      b.input("x", DType::kF32, {Dim::symbol("batch"), Dim::symbol("seq"), 32});
  ValueId shape = b.add("Shape", {x});
  ValueId target = b.add(
      "Concat",
      {dim_of(b, shape, 0), dim_of(b, shape, 1), ints(b, "head_dims", {4, 8})},
      {{"axis", Attribute(0)}});
  ValueId heads = b.add("Reshape", {x, target}, {}, NodeOptions{"heads"});
  ValueId unsqueezed = b.add("Unsqueeze", {heads, ints(b, "axis2", {2})});
  ValueId five =
      b.add("Concat",
            {dim_of(b, shape, 0), dim_of(b, shape, 1), ints(b, "two", {2}),
             ints(b, "four", {4}), ints(b, "eight", {8})},
            {{"axis", Attribute(0)}});
  ValueId minus = ints(b, "minus", {-1, -1, -1, -1, -1});
  ValueId ones = ints(b, "ones", {1, 1, 1, 1, 1});
  ValueId safe = b.add("Where", {b.add("Equal", {five, minus}), ones, five});
  b.output(b.add("Expand", {unsqueezed, safe}), "y");
  b.output(b.add("Reshape", {heads, ints(b, "flat_shape", {0, 0, -1})}),
           "flat");
  return build_or_die(std::move(b));
}

TEST(InferSymbolicShapes, FollowsRunTimeShapeArithmetic) {
  Graph graph = dynamic_graph();
  Graph typed = apply(graph, {});
  EXPECT_FALSE(typed.value(typed.find_value("heads")).shape->is_fixed());
  Graph result = apply(graph, {infer_symbolic_shapes_pass()});
  EXPECT_EQ(result.value(result.find_value("heads")).shape->to_string(),
            "(batch,seq,4,8)");
  EXPECT_EQ(result.value(result.outputs[0]).shape->to_string(),
            "(batch,seq,2,4,8)");
  // -1 after the copied symbolic dims is the product of the rest.
  EXPECT_EQ(result.value(result.outputs[1]).shape->to_string(),
            "(batch,seq,32)");

  std::map<std::string, Tensor> feeds = {{"x", random_tensor({2, 3, 32}, 81)}};
  std::map<std::string, Tensor> before = run_reference(graph, feeds);
  std::map<std::string, Tensor> after = run_reference(result, feeds);
  expect_close(after.at("y"), before.at("y"));
  EXPECT_EQ(after.at("y").dims(), (std::vector<int64_t>{2, 3, 2, 4, 8}));
}

TEST(InferSymbolicShapes, LeavesShapesItCannotProve) {
  GraphBuilder b("g");
  ValueId x = b.input("x", DType::kF32, {Dim::symbol("n"), Dim::symbol("k")});
  ValueId y = b.input("y", DType::kF32, {Dim::symbol("m")});
  ValueId target = b.add("Shape", {y});
  // Expanding (n,k) by (m) gives k or m, whichever is not 1: not provable.
  b.output(b.add("Expand", {x, target}), "out");
  Graph result =
      apply(build_or_die(std::move(b)), {infer_symbolic_shapes_pass()});
  const std::optional<Shape>& shape = result.value(result.outputs[0]).shape;
  ASSERT_TRUE(shape.has_value());
  EXPECT_TRUE((*shape)[1].is_unknown()) << shape->to_string();
}

}  // namespace
}  // namespace seqrt
