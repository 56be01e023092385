#include "compiler/passes/pass.h"

#include <gtest/gtest.h>

#include "compiler/passes/pass_test_util.h"

namespace seqrt {
namespace {

using pass_testing::build_or_die;
using pass_testing::count_ops;
using pass_testing::expect_close;
using pass_testing::random_tensor;
using pass_testing::run_reference;

ValueId scalar(GraphBuilder& b, const std::string& name, float value) {
  return b.constant(name, Tensor::scalar(value));
}

// LayerNorm and GELU as exported, a foldable constant chain and a dead
// branch: the default pipeline leaves LayerNormalization, Add and Gelu.
Graph block_graph() {
  GraphBuilder b("block");
  ValueId x = b.input("x", DType::kF32, {2, 5, 8});
  ValueId axes = b.constant("axes", Tensor::from_vector<int64_t>({1}, {-1}));
  ValueId d = b.add("Sub", {x, b.add("ReduceMean", {x, axes})});
  ValueId var = b.add("ReduceMean", {b.add("Mul", {d, d}), axes});
  ValueId root = b.add("Sqrt", {b.add("Add", {var, scalar(b, "eps", 1e-5f)})});
  ValueId gamma = b.constant("gamma", random_tensor({8}, 51));
  ValueId n = b.add("Mul", {b.add("Div", {d, root}), gamma});
  ValueId bias = b.add("Neg", {b.constant("neg_bias", random_tensor({8}, 52))});
  ValueId h = b.add("Add", {n, bias});
  ValueId erf =
      b.add("Erf", {b.add("Div", {h, scalar(b, "sqrt2", 1.41421356f)})});
  ValueId a = b.add("Add", {erf, scalar(b, "one", 1.0f)});
  b.output(b.add("Mul", {b.add("Mul", {h, a}), scalar(b, "half", 0.5f)}), "y");
  b.add("Relu", {x});  // dead
  return build_or_die(std::move(b));
}

TEST(Passes, DefaultPipelineFusesFoldsAndCleans) {
  Graph graph = block_graph();
  Graph optimized = graph;
  Result<std::vector<PassStats>> stats = optimize_graph(optimized);
  ASSERT_TRUE(stats.is_ok()) << stats.status().to_string();
  EXPECT_EQ(optimized.nodes.size(), 2u);
  EXPECT_EQ(count_ops(optimized, "LayerNormalization"), 1u);
  EXPECT_EQ(count_ops(optimized, "Gelu"), 1u);
  // The folded Neg became the LayerNorm's bias.
  EXPECT_EQ(optimized.nodes[0].inputs.size(), 3u);
  ASSERT_EQ(stats->size(), default_passes().size());
  EXPECT_EQ((*stats)[0].nodes_before, graph.nodes.size());
  EXPECT_EQ(stats->back().nodes_after, 2u);
  EXPECT_NE(format_pass_stats(*stats).find("fuse_gelu"), std::string::npos);

  std::map<std::string, Tensor> feeds = {{"x", random_tensor({2, 5, 8}, 53)}};
  expect_close(run_reference(optimized, feeds).at("y"),
               run_reference(graph, feeds).at("y"));
}

TEST(Passes, OptimizeGraphMarksTheGraphWithThisPipeline) {
  Graph graph = block_graph();
  EXPECT_FALSE(is_optimized(graph));
  ASSERT_TRUE(optimize_graph(graph).is_ok());
  EXPECT_TRUE(is_optimized(graph));
  EXPECT_EQ(graph.metadata.at(kOptimizedByKey), default_pipeline_id());
  EXPECT_NE(default_pipeline_id().find("fuse_attention"), std::string::npos);
  // The mark of another pipeline (an older seqrt) does not count.
  graph.metadata[kOptimizedByKey] = "0:fold_constants";
  EXPECT_FALSE(is_optimized(graph));
}

TEST(Passes, RepeatPassesRunUntilUnchanged) {
  int calls = 0;
  Pass counting{"count_to_three",
                [&calls](Graph&) -> Result<bool> { return ++calls < 3; },
                /*repeat=*/true};
  Graph graph = block_graph();
  Result<std::vector<PassStats>> stats = run_passes(graph, {counting});
  ASSERT_TRUE(stats.is_ok());
  EXPECT_EQ((*stats)[0].runs, 3);
  EXPECT_TRUE((*stats)[0].changed);
}

TEST(Passes, NotesOfAPassShowUnderItsStatistics) {
  Pass noting{"noting", [](Graph&) -> Result<bool> { return false; }};
  noting.run_noting = [](Graph&, PassNotes& notes) -> Result<bool> {
    notes.push_back("looked at 1 node");
    return false;
  };
  Graph graph = block_graph();
  Result<std::vector<PassStats>> stats = run_passes(graph, {noting});
  ASSERT_TRUE(stats.is_ok());
  EXPECT_EQ((*stats)[0].notes, PassNotes{"looked at 1 node"});
  EXPECT_NE(
      format_pass_stats(*stats).find("(unchanged)\n      looked at 1 node\n"),
      std::string::npos)
      << format_pass_stats(*stats);
}

TEST(Passes, AnInvalidGraphAfterAPassNamesThePass) {
  Pass breaking{"drop_first_node", [](Graph& graph) -> Result<bool> {
                  graph.nodes.erase(graph.nodes.begin());
                  return true;
                }};
  Graph graph = block_graph();
  Result<std::vector<PassStats>> stats = run_passes(graph, {breaking});
  ASSERT_FALSE(stats.is_ok());
  EXPECT_NE(stats.status().message().find("drop_first_node"), std::string::npos)
      << stats.status().to_string();

  Pass failing{"fails",
               [](Graph&) -> Result<bool> { return invalid_model("no good"); }};
  stats = run_passes(graph, {failing});
  ASSERT_FALSE(stats.is_ok());
  EXPECT_NE(stats.status().message().find("in pass 'fails'"), std::string::npos)
      << stats.status().to_string();
}

}  // namespace
}  // namespace seqrt
