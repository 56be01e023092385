#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "compiler/planner/memory_plan.h"
#include "graph/builder.h"

namespace seqrt {
namespace {

Graph build_or_fail(GraphBuilder&& builder) {
  Result<Graph> graph = std::move(builder).build();
  EXPECT_TRUE(graph.is_ok()) << graph.status().to_string();
  return graph.is_ok() ? std::move(graph).value() : Graph();
}

// Plans, validates and returns the plan (empty on failure).
MemoryPlan plan_or_fail(const Graph& graph,
                        const std::map<std::string, int64_t>& bindings = {}) {
  Result<MemoryPlan> plan = plan_memory(graph, bindings);
  EXPECT_TRUE(plan.is_ok()) << plan.status().to_string();
  if (!plan.is_ok()) return MemoryPlan();
  Status valid = validate_plan(graph, *plan);
  EXPECT_TRUE(valid.is_ok()) << valid.to_string();
  return std::move(plan).value();
}

const ValuePlan& planned(const Graph& graph, const MemoryPlan& plan,
                         const std::string& name) {
  ValueId id = graph.find_value(name);
  EXPECT_NE(id, kNoValue) << name;
  return plan.values.at(id);
}

ValueId named(GraphBuilder& b, const std::string& op,
              std::vector<ValueId> inputs, const std::string& name,
              AttrMap attrs = {}) {
  return b.add(op, std::move(inputs), std::move(attrs), {name});
}

ValueId shape_constant(GraphBuilder& b, const std::string& name,
                       std::vector<int64_t> dims) {
  const int64_t rank = static_cast<int64_t>(dims.size());
  return b.constant(name, Tensor::from_vector<int64_t>({rank}, dims));
}

// x (4,4) f32 = 64 bytes: every transient below is one aligned block.
ValueId square_input(GraphBuilder& b) {
  return b.input("x", DType::kF32, {4, 4});
}

TEST(PlanMemory, ChainReusesBlocksOfDeadValues) {
  GraphBuilder b("chain");
  ValueId x = square_input(b);
  ValueId t0 = named(b, "Transpose", {x}, "t0");
  ValueId t1 = named(b, "Transpose", {t0}, "t1");
  ValueId t2 = named(b, "Transpose", {t1}, "t2");
  b.output(named(b, "Transpose", {t2}, "y"));
  Graph graph = build_or_fail(std::move(b));
  MemoryPlan plan = plan_or_fail(graph);
  EXPECT_EQ(planned(graph, plan, "x").kind, MemoryKind::kIo);
  EXPECT_EQ(planned(graph, plan, "y").kind, MemoryKind::kIo);
  EXPECT_EQ(planned(graph, plan, "t0").kind, MemoryKind::kArena);
  EXPECT_EQ(planned(graph, plan, "t0").offset, 0);
  EXPECT_EQ(planned(graph, plan, "t1").offset, 64);
  EXPECT_EQ(planned(graph, plan, "t2").offset, 0);
  EXPECT_EQ(planned(graph, plan, "t1").bytes, 64);
  EXPECT_EQ(plan.peak_arena_bytes, 128);
  EXPECT_EQ(plan.naive_arena_bytes, 192);
}

TEST(PlanMemory, DiamondKeepsSharedInputAliveForBothBranches) {
  GraphBuilder b("diamond");
  ValueId x = square_input(b);
  ValueId a = named(b, "Transpose", {x}, "a");
  ValueId left = named(b, "Softmax", {a}, "left");
  ValueId right = named(b, "Transpose", {a}, "right");
  b.output(named(b, "Concat", {left, right}, "y", {{"axis", int64_t{0}}}));
  Graph graph = build_or_fail(std::move(b));
  MemoryPlan plan = plan_or_fail(graph);
  // a is read by both branches, so all three are alive at the second one.
  EXPECT_EQ(planned(graph, plan, "a").last_step, 2);
  EXPECT_EQ(plan.peak_arena_bytes, 192);
  EXPECT_EQ(plan.naive_arena_bytes, 192);
}

TEST(PlanMemory, ElementwiseOpsWriteInPlaceIntoDyingInputs) {
  GraphBuilder b("in_place");
  ValueId x = square_input(b);
  ValueId a = named(b, "Transpose", {x}, "a");
  ValueId r = named(b, "Relu", {a}, "r");
  ValueId s = named(b, "Add", {r, r}, "s");
  b.output(named(b, "Transpose", {s}, "y"));
  Graph graph = build_or_fail(std::move(b));
  MemoryPlan plan = plan_or_fail(graph);
  EXPECT_EQ(planned(graph, plan, "r").alias_of, a);
  EXPECT_TRUE(planned(graph, plan, "r").in_place);
  EXPECT_EQ(planned(graph, plan, "s").alias_of, r);
  EXPECT_EQ(planned(graph, plan, "s").offset, 0);
  EXPECT_EQ(plan.peak_arena_bytes, 64);
  EXPECT_EQ(plan.naive_arena_bytes, 192);
}

TEST(PlanMemory, InPlaceNeverOverwritesAnInputReadLater) {
  GraphBuilder b("no_clobber");
  ValueId x = square_input(b);
  ValueId a = named(b, "Transpose", {x}, "a");
  ValueId r = named(b, "Relu", {a}, "r");
  ValueId s = named(b, "Add", {a, r}, "s");  // a is read after Relu
  b.output(named(b, "Transpose", {s}, "y"));
  Graph graph = build_or_fail(std::move(b));
  MemoryPlan plan = plan_or_fail(graph);
  EXPECT_EQ(planned(graph, plan, "r").alias_of, kNoValue);
  EXPECT_NE(planned(graph, plan, "r").offset, planned(graph, plan, "a").offset);
  // Both inputs die at Add: it takes the first one's block.
  EXPECT_EQ(planned(graph, plan, "s").alias_of, a);
  EXPECT_EQ(plan.peak_arena_bytes, 128);
}

TEST(PlanMemory, CastWritesInPlaceOnlyAtTheSameByteSize) {
  GraphBuilder b("cast");
  ValueId x = square_input(b);
  ValueId a = named(b, "Transpose", {x}, "a");
  ValueId as_int = named(b, "Cast", {a}, "as_int", {{"to", int64_t{6}}});
  ValueId as_half =
      named(b, "Cast", {as_int}, "as_half", {{"to", int64_t{10}}});
  b.output(named(b, "Transpose", {as_half}, "y"));
  Graph graph = build_or_fail(std::move(b));
  MemoryPlan plan = plan_or_fail(graph);
  EXPECT_EQ(planned(graph, plan, "as_int").alias_of, a);
  EXPECT_EQ(planned(graph, plan, "as_half").alias_of, kNoValue);
  EXPECT_EQ(planned(graph, plan, "as_half").bytes, 32);
}

TEST(PlanMemory, ViewsShareTheirInputsBlockUntilTheLastAliasDies) {
  GraphBuilder b("views");
  ValueId x = square_input(b);
  ValueId flat = shape_constant(b, "flat", {16});
  ValueId a = named(b, "Transpose", {x}, "a");
  ValueId v = named(b, "Reshape", {a, flat}, "v");
  ValueId t = named(b, "Transpose", {x}, "t");
  ValueId tv = named(b, "Reshape", {t, flat}, "tv");
  ValueId xv = named(b, "Reshape", {x, flat}, "xv");
  // A view of a weight that nothing reads: planned all the same. The
  // weight is beyond what inference evaluates, so wv is not precomputed.
  ValueId w = b.constant("w", Tensor::from_vector<float>(
                                  {64, 128}, std::vector<float>(8192, 1.0f)));
  named(b, "Reshape", {w, shape_constant(b, "all", {8192})}, "wv");
  b.output(named(b, "Concat", {v, tv, xv}, "y", {{"axis", int64_t{0}}}));
  Graph graph = build_or_fail(std::move(b));
  MemoryPlan plan = plan_or_fail(graph);
  const ValuePlan& planned_v = planned(graph, plan, "v");
  EXPECT_EQ(planned_v.kind, MemoryKind::kArena);
  EXPECT_EQ(planned_v.alias_of, a);
  EXPECT_FALSE(planned_v.in_place);
  EXPECT_EQ(planned_v.offset, planned(graph, plan, "a").offset);
  // a's block lives on through v, so t's block cannot take it.
  EXPECT_NE(planned(graph, plan, "t").offset, planned_v.offset);
  EXPECT_EQ(planned(graph, plan, "tv").offset,
            planned(graph, plan, "t").offset);
  // Views of an input and of a weight take their kind and no arena.
  EXPECT_EQ(planned(graph, plan, "xv").kind, MemoryKind::kIo);
  EXPECT_EQ(planned(graph, plan, "xv").alias_of, x);
  EXPECT_EQ(planned(graph, plan, "wv").kind, MemoryKind::kConstant);
  EXPECT_EQ(planned(graph, plan, "wv").alias_of, w);
  EXPECT_EQ(plan.peak_arena_bytes, 128);
  EXPECT_EQ(plan.naive_arena_bytes, 256);
}

TEST(PlanMemory, EveryViewOpJoinsOneBlock) {
  GraphBuilder b("view_chain");
  ValueId x = b.input("x", DType::kF32, {2, 8});
  ValueId axes = shape_constant(b, "axes", {0});
  ValueId t = named(b, "Transpose", {x}, "t");                        // (8,2)
  ValueId u = named(b, "Unsqueeze", {t, axes}, "u");                  // (1,8,2)
  ValueId s = named(b, "Squeeze", {u, axes}, "s");                    // (8,2)
  ValueId f = named(b, "Flatten", {s}, "f", {{"axis", int64_t{0}}});  // (1,16)
  ValueId i = named(b, "Identity", {f}, "i");
  b.output(named(b, "Softmax", {i}, "y"));
  Graph graph = build_or_fail(std::move(b));
  MemoryPlan plan = plan_or_fail(graph);
  EXPECT_EQ(planned(graph, plan, "u").alias_of, t);
  EXPECT_EQ(planned(graph, plan, "s").alias_of, u);
  EXPECT_EQ(planned(graph, plan, "f").alias_of, s);
  EXPECT_EQ(planned(graph, plan, "i").alias_of, f);
  EXPECT_EQ(planned(graph, plan, "i").offset, planned(graph, plan, "t").offset);
  EXPECT_EQ(plan.peak_arena_bytes, 64);
  EXPECT_EQ(plan.naive_arena_bytes, 5 * 64);
}

TEST(PlanMemory, SubgraphCapturesLiveUntilTheirNodeEnds) {
  GraphBuilder branch("then");
  branch.output(
      branch.add("Neg", {branch.capture("a", DType::kF32, Shape{4, 4})}), "o");
  GraphBuilder other("else");
  other.output(other.add("Abs", {other.capture("x", DType::kF32, Shape{4, 4})}),
               "o");
  GraphBuilder b("if");
  ValueId x = square_input(b);
  ValueId cond = b.input("cond", DType::kBool, {});
  named(b, "Transpose", {x}, "a");
  ValueId t = named(b, "Transpose", {x}, "t");
  ValueId chosen = named(
      b, "If", {cond}, "chosen",
      {{"then_branch", Attribute(std::make_shared<Graph>(branch.graph()))},
       {"else_branch", Attribute(std::make_shared<Graph>(other.graph()))}});
  b.output(named(b, "Concat", {chosen, t}, "y", {{"axis", int64_t{0}}}));
  Graph graph = build_or_fail(std::move(b));
  MemoryPlan plan = plan_or_fail(graph);
  const ValuePlan& planned_a = planned(graph, plan, "a");
  EXPECT_EQ(planned_a.last_step, planned(graph, plan, "chosen").first_step);
  EXPECT_NE(planned_a.offset, planned(graph, plan, "t").offset);
  EXPECT_NE(planned_a.offset, planned(graph, plan, "chosen").offset);
}

TEST(PlanMemory, StatePairsAreOwnedByTheStream) {
  GraphBuilder b("state");
  ValueId x = b.input("x", DType::kF32, {Dim::symbol("batch"), 8});
  ValueId past = b.input("past", DType::kF32, {Dim::symbol("batch"), 8});
  ValueId sum = named(b, "Add", {past, x}, "present");
  b.output(sum);
  b.output(named(b, "Relu", {sum}, "y"));
  b.state_pair(past, sum);
  Graph graph = build_or_fail(std::move(b));
  MemoryPlan plan = plan_or_fail(graph, {{"batch", 3}});
  EXPECT_EQ(planned(graph, plan, "past").kind, MemoryKind::kState);
  EXPECT_EQ(planned(graph, plan, "present").kind, MemoryKind::kState);
  EXPECT_EQ(planned(graph, plan, "present").alias_of, kNoValue);
  EXPECT_EQ(planned(graph, plan, "y").kind, MemoryKind::kIo);
  EXPECT_EQ(planned(graph, plan, "present").bytes, 3 * 8 * 4);
  EXPECT_EQ(plan.peak_arena_bytes, 0);
}

TEST(PlanMemory, BoundDimsGiveSizesThroughShapeArithmetic) {
  GraphBuilder b("bound");
  ValueId x = b.input("x", DType::kF32, {Dim::symbol("seq"), 4});
  ValueId shape = named(b, "Shape", {x}, "shape");
  ValueId t = named(b, "Transpose", {x}, "t");
  ValueId r = named(b, "Reshape", {t, shape}, "r");
  b.output(named(b, "Softmax", {r}, "y"));
  Graph graph = build_or_fail(std::move(b));
  MemoryPlan plan = plan_or_fail(graph, {{"seq", 5}});
  EXPECT_EQ(planned(graph, plan, "t").dims, (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(planned(graph, plan, "r").dims, (std::vector<int64_t>{5, 4}));
  EXPECT_EQ(planned(graph, plan, "r").alias_of, t);
  EXPECT_EQ(planned(graph, plan, "shape").bytes, 16);
  EXPECT_EQ(planned(graph, plan, "shape").kind, MemoryKind::kPrecomputed);
  EXPECT_EQ(plan.peak_arena_bytes, 128) << "t only: shape is precomputed";
}

// x (seq, 4): y = Reshape(Relu(x), [x.dim(1), x.dim(0)]) with the new shape
// built as an export builds it. The binding fixes the whole chain.
Graph shape_chain_graph() {
  GraphBuilder b("chain");
  ValueId x = b.input("x", DType::kF32, {Dim::symbol("seq"), 4});
  ValueId shape = named(b, "Shape", {x}, "shape");
  ValueId zero = b.constant("zero", Tensor::scalar<int64_t>(0));
  ValueId one = b.constant("one", Tensor::scalar<int64_t>(1));
  ValueId axes = shape_constant(b, "axes", {0});
  ValueId rows = named(b, "Gather", {shape, zero}, "rows");
  ValueId cols = named(b, "Gather", {shape, one}, "cols");
  ValueId new_shape = named(b, "Concat",
                            {named(b, "Unsqueeze", {cols, axes}, "cols1"),
                             named(b, "Unsqueeze", {rows, axes}, "rows1")},
                            "new_shape", {{"axis", Attribute(int64_t{0})}});
  ValueId relu = named(b, "Relu", {x}, "relu");
  b.output(named(b, "Reshape", {relu, new_shape}, "y"));
  return build_or_fail(std::move(b));
}

TEST(PlanMemory, ShapeArithmeticIsPrecomputedOncePerBinding) {
  Graph graph = shape_chain_graph();
  for (int64_t seq : {3, 7}) {
    MemoryPlan plan = plan_or_fail(graph, {{"seq", seq}});
    for (const char* name :
         {"shape", "rows", "cols", "cols1", "rows1", "new_shape"}) {
      EXPECT_EQ(planned(graph, plan, name).kind, MemoryKind::kPrecomputed)
          << name;
    }
    EXPECT_EQ(planned(graph, plan, "relu").kind, MemoryKind::kArena);
    const ValueId new_shape = graph.find_value("new_shape");
    bool found = false;
    for (const auto& [id, tensor] : plan.precomputed) {
      if (id != new_shape) continue;
      found = true;
      const int64_t* dims = tensor.data_as<int64_t>();
      ASSERT_EQ(tensor.num_elements(), 2);
      EXPECT_EQ(dims[0], 4);
      EXPECT_EQ(dims[1], seq);
    }
    EXPECT_TRUE(found);
    int skipped = 0;
    for (size_t n = 0; n < graph.nodes.size(); ++n) {
      const std::string& op = graph.nodes[n].op;
      const bool shape_op = op != "Relu" && op != "Reshape";
      EXPECT_EQ(plan.precomputed_nodes.at(n), shape_op) << op;
      skipped += plan.precomputed_nodes[n] ? 1 : 0;
    }
    EXPECT_EQ(skipped, 6) << "Shape, 2 Gather, 2 Unsqueeze, Concat";
  }
}

TEST(PlanMemory, UnboundDimIsAnErrorNamingTheValue) {
  GraphBuilder b("unbound");
  ValueId x = b.input("x", DType::kF32, {Dim::symbol("seq"), 4});
  b.output(named(b, "Transpose", {x}, "y"));
  Graph graph = build_or_fail(std::move(b));
  Result<MemoryPlan> plan = plan_memory(graph, {{"batch", 2}});
  ASSERT_FALSE(plan.is_ok());
  EXPECT_EQ(plan.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(plan.status().message().find("'x'"), std::string::npos)
      << plan.status().message();
  EXPECT_NE(plan.status().message().find("batch=2"), std::string::npos)
      << plan.status().message();
  EXPECT_NE(plan.status().message().find("bind 'seq'"), std::string::npos)
      << plan.status().message();
}

TEST(PlanMemory, EmptyGraphHasAnEmptyArena) {
  GraphBuilder b("pass_through");
  b.output(square_input(b));
  Graph graph = build_or_fail(std::move(b));
  MemoryPlan plan = plan_or_fail(graph);
  EXPECT_EQ(plan.peak_arena_bytes, 0);
  EXPECT_EQ(plan.naive_arena_bytes, 0);
}

}  // namespace
}  // namespace seqrt
