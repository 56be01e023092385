// A CPU Session runs from the memory plan by default; its results are the
// same bytes as a run that allocates every tensor, for every binding of the
// symbolic dims it meets.
#include <gtest/gtest.h>

#include "graph/builder.h"
#include "runtime/session.h"
#include "testing/random_tensor.h"

namespace seqrt {
namespace {

// x (batch, seq, 16): a pre-norm MLP block with a residual.
Graph block_graph() {
  GraphBuilder b("block");
  ValueId x = b.input("x", DType::kF32,
                      Shape{Dim::symbol("batch"), Dim::symbol("seq"), 16});
  ValueId gamma = b.constant("gamma", random_uniform_f32({16}, 1));
  ValueId w1 = b.constant("w1", random_uniform_f32({16, 64}, 2));
  ValueId b1 = b.constant("b1", random_uniform_f32({64}, 3));
  ValueId w2 = b.constant("w2", random_uniform_f32({64, 16}, 4));
  ValueId n = b.add("LayerNormalization", {x, gamma});
  ValueId h = b.add("Add", {b.add("MatMul", {n, w1}), b1});
  ValueId g = b.add("Mul", {h, b.add("Sigmoid", {h})});
  ValueId y = b.add("Add", {x, b.add("MatMul", {g, w2})});
  b.output(b.add("Softmax", {y}), "y");
  return std::move(b).build().value();
}

TEST(PlannedSession, ResultsAreTheSameWithAndWithoutThePlan) {
  SessionOptions planned;
  planned.backend = "cpu";
  SessionOptions heap = planned;
  heap.compile.use_memory_plan = false;
  auto with_plan = Session::create(block_graph(), planned).value();
  auto without = Session::create(block_graph(), heap).value();
  for (int64_t seq : {1, 7, 33, 7}) {
    std::map<std::string, Tensor> feeds{
        {"x", random_uniform_f32({2, seq, 16}, seq)}};
    auto a = with_plan->run(feeds).value();
    auto b = without->run(feeds).value();
    EXPECT_TRUE(a.at("y").same_as(b.at("y"))) << "seq " << seq;
  }
}

}  // namespace
}  // namespace seqrt
