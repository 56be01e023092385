#include <gtest/gtest.h>

#include "compiler/infer/infer_graph.h"
#include "graph/builder.h"
#include "ops/registry.h"

namespace seqrt {
namespace {

// A test-only op: Y = X scaled by `factor`, with an optional second input
// and a string attribute limited to two values.
OpSchema scale_schema() {
  OpSchema s;
  s.domain = "test";
  s.name = "Scale";
  s.inputs = {{"X"}, {"Bias", true}};
  s.outputs = {{"Y"}};
  s.attrs = {
      {"factor", AttrType::kFloat, Attribute(2.0f)},
      {"mode", AttrType::kString, Attribute("up"), false, {"up", "down"}},
      {"tag", AttrType::kInt, std::nullopt, true}};
  s.infer = [](InferContext& ctx) {
    ctx.set_output(0, ctx.input_dtype(0), ctx.input_shape(0));
    return Status::ok();
  };
  s.reference = [](KernelContext& ctx) {
    const Tensor& x = *ctx.input(0);
    SEQRT_ASSIGN_OR_RETURN(Tensor * y,
                           ctx.allocate_output(0, x.dtype(), x.dims()));
    for (int64_t i = 0; i < x.num_elements(); ++i) {
      y->set_element_f64(i, x.element_f64(i) * ctx.attr_float("factor"));
    }
    return Status::ok();
  };
  return s;
}

Node scale_node(AttrMap attrs) {
  Node node;
  node.name = "s0";
  node.op = "Scale";
  node.domain = "test";
  node.inputs = {0};
  node.outputs = {1};
  node.attrs = std::move(attrs);
  return node;
}

TEST(CheckNode, AcceptsAValidNode) {
  OpSchema schema = scale_schema();
  EXPECT_TRUE(check_node(scale_node({{"tag", Attribute(1)}}), schema).is_ok());
}

TEST(CheckNode, ReportsEachKindOfMistake) {
  OpSchema schema = scale_schema();
  struct Case {
    AttrMap attrs;
    std::vector<ValueId> inputs;
    std::string expected;
  };
  std::vector<Case> cases = {
      {{}, {0}, "required attribute 'tag' is missing"},
      {{{"tag", Attribute(1)}, {"bogus", Attribute(1)}},
       {0},
       "unknown attribute 'bogus'"},
      {{{"tag", Attribute(1.5f)}},
       {0},
       "attribute 'tag' must be int, got float"},
      {{{"tag", Attribute(1)}, {"mode", Attribute("sideways")}},
       {0},
       "allowed: up, down"},
      {{{"tag", Attribute(1)}}, {}, "expects at least 1 input"},
      {{{"tag", Attribute(1)}}, {0, 1, 2}, "expects at most 2 input"},
      {{{"tag", Attribute(1)}}, {kNoValue}, "input 'X' is required"},
  };
  for (const Case& c : cases) {
    Node node = scale_node(c.attrs);
    node.inputs = c.inputs;
    Status status = check_node(node, schema);
    ASSERT_FALSE(status.is_ok()) << c.expected;
    EXPECT_NE(status.message().find("[Scale] node 's0'"), std::string::npos);
    EXPECT_NE(status.message().find(c.expected), std::string::npos)
        << status.message();
  }
}

TEST(OpContext, AttributesFallBackToDefaults) {
  OpSchema schema = scale_schema();
  Node node = scale_node({{"tag", Attribute(7)}});
  OpContext ctx(node, schema);
  EXPECT_EQ(ctx.attr_float("factor"), 2.0f);
  EXPECT_EQ(ctx.attr_string("mode"), "up");
  EXPECT_EQ(ctx.attr_int("tag"), 7);
  EXPECT_TRUE(ctx.has_attr("factor"));
  EXPECT_FALSE(ctx.has_attr("missing"));
  EXPECT_EQ(ctx.error("bad {}", 3).message(), "[Scale] node 's0': bad 3");
}

TEST(OpRegistry, RejectsDuplicatesAndIncompleteSchemas) {
  OpRegistry registry;
  EXPECT_TRUE(registry.add(scale_schema()).is_ok());
  EXPECT_FALSE(registry.add(scale_schema()).is_ok());
  OpSchema incomplete = scale_schema();
  incomplete.name = "NoKernel";
  incomplete.reference = nullptr;
  EXPECT_FALSE(registry.add(incomplete).is_ok());
  EXPECT_NE(registry.find("test", "Scale"), nullptr);
  EXPECT_EQ(registry.find("", "Scale"), nullptr);
}

TEST(OpRegistry, GlobalRegistryOpsAreComplete) {
  for (const auto& schema : OpRegistry::global().all()) {
    EXPECT_FALSE(schema->name.empty());
    EXPECT_FALSE(schema->doc.empty()) << schema->qualified_name();
    EXPECT_FALSE(schema->outputs.empty()) << schema->qualified_name();
  }
}

TEST(InferGraph, FillsTypesAndReportsConflicts) {
  OpRegistry registry;
  ASSERT_TRUE(registry.add(scale_schema()).is_ok());
  GraphBuilder b("g");
  ValueId x = b.input("x", DType::kF32, {Dim::symbol("n"), 3});
  NodeOptions options;
  options.domain = "test";
  ValueId y = b.add("Scale", {x}, {{"tag", Attribute(1)}}, options);
  b.output(y, "y");
  Graph graph = std::move(b).build().value();
  ASSERT_TRUE(infer_graph(graph, registry).is_ok());
  EXPECT_EQ(graph.value(y).dtype, DType::kF32);
  EXPECT_EQ(graph.value(y).shape->to_string(), "(n,3)");

  Graph conflict = graph;
  conflict.value(y).shape = Shape{4, 4};
  Status status = infer_graph(conflict, registry);
  EXPECT_NE(status.message().find("declared with shape (4,4) but the op "
                                  "gives (n,3)"),
            std::string::npos)
      << status.message();

  Graph sharper = graph;
  sharper.value(y).shape = Shape{5, Dim::unknown()};
  ASSERT_TRUE(infer_graph(sharper, registry).is_ok());
  EXPECT_EQ(sharper.value(y).shape->to_string(), "(5,3)");
}

TEST(InferGraph, ListsEveryUnknownOp) {
  GraphBuilder b("g");
  ValueId x = b.input("x", DType::kF32, {2});
  ValueId y = b.add("NoSuchOp", {x}, {}, {"first"});
  b.output(b.add("AlsoMissing", {y}, {}, {"second", "custom"}));
  Graph graph = std::move(b).build().value();
  Status status = infer_graph(graph);
  EXPECT_EQ(status.code(), StatusCode::kUnsupported);
  EXPECT_NE(status.message().find("2 unknown op(s): NoSuchOp (node 'first'), "
                                  "custom::AlsoMissing (node 'second')"),
            std::string::npos)
      << status.message();
}

}  // namespace
}  // namespace seqrt
