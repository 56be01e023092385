// rebase_shape_reads: Shape of a computed value becomes arithmetic on the
// graph inputs' dims, giving the same values; reads it cannot express stay.
#include <gtest/gtest.h>

#include "compiler/infer/infer_graph.h"
#include "compiler/passes/pass_test_util.h"
#include "compiler/passes/passes.h"

namespace seqrt {
namespace {

using pass_testing::build_or_die;
using pass_testing::count_ops;
using pass_testing::expect_close;
using pass_testing::random_tensor;
using pass_testing::run_reference;

// c = Concat(past (1,2,past,4), x (1,2,seq,4)) on axis 2; the outputs read
// c's shape (whole, and axes 1..3 by start/end) and 3 * c.dim(2) * seq.
Graph concat_shape_graph() {
  GraphBuilder b("concat_shape");
  ValueId past = b.input("past", DType::kF32, {1, 2, Dim::symbol("past"), 4});
  ValueId x = b.input("x", DType::kF32, {1, 2, Dim::symbol("seq"), 4});
  ValueId c = b.add("Concat", {past, x}, {{"axis", Attribute(int64_t{2})}});
  b.output(b.add("Relu", {c}), "y");
  b.output(b.add("Shape", {c}), "shape");
  b.output(b.add("Shape", {c},
                 {{"start", Attribute(int64_t{1})},
                  {"end", Attribute(int64_t{-1})}}),
           "middle");
  ValueId index = b.constant("two", Tensor::scalar<int64_t>(2));
  ValueId keys = b.add("Gather", {b.add("Shape", {c}), index});
  ValueId seq = b.add("Gather", {b.add("Shape", {x}), index});
  ValueId three = b.constant("three", Tensor::scalar<int64_t>(3));
  b.output(b.add("Mul", {b.add("Mul", {keys, seq}), three}), "product");
  Graph graph = build_or_die(std::move(b));
  EXPECT_TRUE(infer_graph(graph).is_ok());
  return graph;
}

// The Shape nodes that read a value no graph input is.
size_t computed_shape_reads(const Graph& graph) {
  size_t count = 0;
  for (const Node& node : graph.nodes) {
    if (node.op != "Shape") continue;
    bool of_input = false;
    for (ValueId id : graph.inputs) of_input |= node.inputs[0] == id;
    count += of_input ? 0 : 1;
  }
  return count;
}

TEST(RebaseShapeReads, ReadsTheInputsDimsAndGivesTheSameValues) {
  Graph graph = concat_shape_graph();
  Graph rebased = graph;
  Result<bool> changed = rebase_shape_reads_pass().run(rebased);
  ASSERT_TRUE(changed.is_ok()) << changed.status().to_string();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(computed_shape_reads(graph), 3u);
  EXPECT_EQ(computed_shape_reads(rebased), 0u);
  ASSERT_TRUE(infer_graph(rebased).is_ok());
  for (int64_t past : {0, 3}) {
    std::map<std::string, Tensor> feeds = {
        {"past", random_tensor({1, 2, past, 4}, 71)},
        {"x", random_tensor({1, 2, 5, 4}, 72)}};
    std::map<std::string, Tensor> want = run_reference(graph, feeds);
    std::map<std::string, Tensor> got = run_reference(rebased, feeds);
    for (const char* name : {"y", "shape", "middle", "product"}) {
      expect_close(got.at(name), want.at(name));
    }
    EXPECT_EQ(got.at("middle").dims(), (std::vector<int64_t>{2}));
  }
}

TEST(RebaseShapeReads, LeavesReadsItCannotExpress) {
  // A Reshape to a shape fed at run time has dims only the data tells; a
  // fixed shape is left to constant folding; a graph input's own shape is
  // already a plain read.
  GraphBuilder b("unknown");
  ValueId x = b.input("x", DType::kF32, {Dim::symbol("n")});
  ValueId to = b.input("to", DType::kI64, {2});
  b.output(b.add("Shape", {b.add("Reshape", {x, to})}), "data_shape");
  b.output(b.add("Shape",
                 {b.add("Relu", {b.constant("w", random_tensor({3, 2}, 73))})}),
           "fixed_shape");
  b.output(b.add("Shape", {x}), "input_shape");
  Graph graph = build_or_die(std::move(b));
  Status typed = infer_graph(graph);
  ASSERT_TRUE(typed.is_ok()) << typed.to_string();
  Result<bool> changed = rebase_shape_reads_pass().run(graph);
  ASSERT_TRUE(changed.is_ok()) << changed.status().to_string();
  EXPECT_FALSE(*changed);
  EXPECT_EQ(count_ops(graph, "Shape"), 3u);
}

}  // namespace
}  // namespace seqrt
