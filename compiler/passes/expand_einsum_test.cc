#include "compiler/passes/expand_einsum.h"

#include <gtest/gtest.h>

#include "compiler/passes/pass_test_util.h"

namespace seqrt {
namespace {

using pass_testing::build_or_die;
using pass_testing::expect_fused;
using pass_testing::random_tensor;

const Pass kExpandEinsum{"expand_einsum", expand_einsum};

struct EinsumCase {
  std::string name;
  std::string equation;
  std::vector<std::vector<int64_t>> dims;  // one per operand
};

// One Einsum node "mix" over inputs x0, x1, ... of `dims`, giving "y".
Graph einsum_graph(const std::string& equation,
                   const std::vector<std::vector<int64_t>>& dims) {
  GraphBuilder b("einsum");
  std::vector<ValueId> inputs;
  for (size_t i = 0; i < dims.size(); ++i) {
    std::vector<Dim> shape(dims[i].begin(), dims[i].end());
    inputs.push_back(
        b.input("x" + std::to_string(i), DType::kF32, Shape(shape)));
  }
  NodeOptions options;
  options.name = "mix";
  b.output(
      b.add("Einsum", inputs, {{"equation", Attribute(equation)}}, options),
      "y");
  return build_or_die(std::move(b));
}

std::vector<std::string> equations_of(const Graph& graph) {
  std::vector<std::string> equations;
  for (const Node& node : graph.nodes) {
    const Attribute* equation = node.attr("equation");
    equations.push_back(equation ? equation->as_string() : "");
  }
  return equations;
}

class ExpandEinsum : public testing::TestWithParam<EinsumCase> {};

TEST_P(ExpandEinsum, GivesTheSameResultAsTheOp) {
  const EinsumCase& c = GetParam();
  std::map<std::string, Tensor> feeds;
  for (size_t i = 0; i < c.dims.size(); ++i) {
    feeds["x" + std::to_string(i)] =
        random_tensor(c.dims[i], static_cast<uint32_t>(20 + i));
  }
  Graph expanded = expect_fused(einsum_graph(c.equation, c.dims), kExpandEinsum,
                                "Einsum", c.dims.size() - 1, feeds);
  for (const Node& node : expanded.nodes) {
    EXPECT_EQ(node.op, "Einsum") << node.label();
    EXPECT_EQ(node.inputs.size(), 2u) << node.label();
    EXPECT_FALSE(is_einsum_to_expand(node)) << node.label();
  }
}

INSTANTIATE_TEST_SUITE_P(
    ExpandEinsumCases, ExpandEinsum,
    testing::Values(
        EinsumCase{"ChainMatmul", "ij,jk,kl->il", {{2, 3}, {3, 4}, {4, 5}}},
        EinsumCase{
            "OuterBatchSummed", "bi,bj,bk->ijk", {{3, 2}, {3, 4}, {3, 5}}},
        EinsumCase{"ImplicitOutput", "ij,jk,kl", {{2, 3}, {3, 4}, {4, 5}}},
        EinsumCase{"ImplicitOutputSortsUppercaseFirst",
                   "aB,Bc,cD",
                   {{2, 3}, {3, 4}, {4, 5}}},
        EinsumCase{"EllipsisBroadcastsBatchDims",
                   "...ij,...jk,...kl->...il",
                   {{2, 3, 4, 5}, {3, 5, 6}, {2, 1, 6, 2}}},
        EinsumCase{"EllipsisInFirstOperandOnly",
                   "...ij,jk,kl->...il",
                   {{2, 3, 4}, {4, 5}, {5, 6}}},
        EinsumCase{"EllipsisInLastOperandOnly",
                   "ij,jk,...kl->...il",
                   {{2, 3}, {3, 4}, {5, 4, 6}}},
        EinsumCase{"ImplicitOutputWithEllipsis",
                   "ij,...jk,kl",
                   {{2, 3}, {4, 3, 5}, {5, 6}}},
        EinsumCase{"EllipsisInsideTheOutput",
                   "i...j,j...k,kl->i...l",
                   {{2, 3, 4}, {4, 1, 5}, {5, 6}}},
        EinsumCase{"Diagonal", "ii,ij,jk->k", {{3, 3}, {3, 4}, {4, 5}}},
        EinsumCase{
            "DiagonalKeptForLater", "ii,ij,ik->ijk", {{3, 3}, {3, 4}, {3, 5}}},
        EinsumCase{"FourOperands",
                   "abc,cd,a,de->be",
                   {{2, 3, 4}, {4, 5}, {2}, {5, 6}}},
        EinsumCase{"LetterOfOneOperandOnly",
                   "ixj,jk,kyl->il",
                   {{2, 3, 4}, {4, 5}, {5, 2, 6}}},
        EinsumCase{
            "LabelKeptAcrossAStep", "ij,kl,jl->ik", {{2, 3}, {4, 5}, {3, 5}}},
        EinsumCase{"ScalarOperand", ",ij,jk->ik", {{}, {2, 3}, {3, 4}}},
        EinsumCase{"UppercaseAndSpaces",
                   " Ab , bC,C d -> A d",
                   {{2, 3}, {3, 4}, {4, 5}}}),
    [](const testing::TestParamInfo<EinsumCase>& info) {
      return info.param.name;
    });

TEST(ExpandEinsumSteps, SumsEachLetterAtTheFirstStepThatAllows) {
  Graph graph = einsum_graph("ixj,jk,kyl->il", {{2, 3, 4}, {4, 5}, {5, 2, 6}});
  ASSERT_TRUE(expand_einsum(graph).value());
  EXPECT_EQ(equations_of(graph),
            (std::vector<std::string>{"ixj,jk->ik", "ik,kyl->il"}));
}

TEST(ExpandEinsumSteps, KeepsLettersThatLaterOperandsUse) {
  Graph graph = einsum_graph("bi,bj,bk->ijk", {{3, 2}, {3, 4}, {3, 5}});
  ASSERT_TRUE(expand_einsum(graph).value());
  EXPECT_EQ(equations_of(graph),
            (std::vector<std::string>{"bi,bj->bij", "bij,bk->ijk"}));
}

TEST(ExpandEinsumSteps, SpellsOutTheImplicitOutputAndTheEllipsis) {
  Graph graph = einsum_graph("ij,...jk,kl", {{2, 3}, {4, 3, 5}, {5, 6}});
  ASSERT_TRUE(expand_einsum(graph).value());
  EXPECT_EQ(equations_of(graph),
            (std::vector<std::string>{"ij,...jk->...ik", "...ik,kl->...il"}));
}

TEST(ExpandEinsumSteps, NamesTheStepsAfterTheNode) {
  Graph graph =
      einsum_graph("ab,bc,cd,de->ae", {{2, 3}, {3, 4}, {4, 5}, {5, 6}});
  ASSERT_TRUE(expand_einsum(graph).value());
  ASSERT_EQ(graph.nodes.size(), 3u);
  EXPECT_EQ(graph.nodes[0].name, "mix_partial1");
  EXPECT_EQ(graph.nodes[1].name, "mix_partial2");
  EXPECT_EQ(graph.nodes[2].name, "mix");
  EXPECT_EQ(graph.value(graph.nodes[2].outputs[0]).name, "y");
}

TEST(ExpandEinsumLeaves, TwoOperandEinsumAlone) {
  Graph graph = einsum_graph("ij,jk->ik", {{2, 3}, {3, 4}});
  EXPECT_FALSE(is_einsum_to_expand(graph.nodes[0]));
  pass_testing::expect_unchanged(graph, kExpandEinsum);
}

TEST(ExpandEinsumLeaves, UnparsableEquationsAlone) {
  for (const char* equation :
       {"ij,jk,k1->il", "ij,jk->ik", "ij,jk,kl->iz", "ij,jk,kl->ii",
        "ij,jk,kl->...il", "i....j,jk,kl->il", "ij,jk,kl->i-l"}) {
    SCOPED_TRACE(equation);
    // Built without inference: the op would reject these equations.
    const Graph graph = einsum_graph(equation, {{2, 3}, {3, 4}, {4, 5}});
    EXPECT_TRUE(is_einsum_to_expand(graph.nodes[0]));
    Graph result = graph;
    Result<bool> changed = expand_einsum(result);
    ASSERT_TRUE(changed.is_ok()) << changed.status().to_string();
    EXPECT_FALSE(*changed);
    EXPECT_TRUE(graphs_equal(result, graph));
  }
}

}  // namespace
}  // namespace seqrt
