#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compiler/planner/memory_plan.h"
#include "graph/builder.h"

namespace seqrt {
namespace {

// x -> a = Transpose -> r = Relu(a) -> s = Add(a, r) -> y = Transpose(s):
// a is read after Relu, so r may not overwrite it.
struct Fixture {
  Graph graph;
  MemoryPlan plan;
  ValueId a = kNoValue;
  ValueId r = kNoValue;
  ValueId s = kNoValue;
};

Fixture make_fixture() {
  GraphBuilder b("fixture");
  ValueId x = b.input("x", DType::kF32, {4, 4});
  Fixture f;
  f.a = b.add("Transpose", {x}, {}, {"a"});
  f.r = b.add("Relu", {f.a}, {}, {"r"});
  f.s = b.add("Add", {f.a, f.r}, {}, {"s"});
  b.output(b.add("Transpose", {f.s}, {}, {"y"}));
  Result<Graph> graph = std::move(b).build();
  EXPECT_TRUE(graph.is_ok()) << graph.status().to_string();
  f.graph = std::move(graph).value();
  Result<MemoryPlan> plan = plan_memory(f.graph, {});
  EXPECT_TRUE(plan.is_ok()) << plan.status().to_string();
  f.plan = std::move(plan).value();
  return f;
}

void expect_invalid(const Fixture& f, const std::string& fragment) {
  Status status = validate_plan(f.graph, f.plan);
  ASSERT_FALSE(status.is_ok()) << "expected an error with: " << fragment;
  EXPECT_NE(status.message().find(fragment), std::string::npos)
      << status.message();
}

// x (seq, 4) -> y = Reshape(x, Shape(x)): Shape is precomputed.
struct ShapeFixture {
  Graph graph;
  MemoryPlan plan;
  ValueId shape = kNoValue;
};

ShapeFixture make_shape_fixture() {
  GraphBuilder b("shape");
  ValueId x = b.input("x", DType::kF32, {Dim::symbol("seq"), 4});
  ShapeFixture f;
  f.shape = b.add("Shape", {x}, {}, {"shape"});
  b.output(b.add("Reshape", {b.add("Relu", {x}), f.shape}, {}, {"y"}));
  f.graph = std::move(b).build().value();
  Result<MemoryPlan> plan = plan_memory(f.graph, {{"seq", 3}});
  EXPECT_TRUE(plan.is_ok()) << plan.status().to_string();
  f.plan = std::move(plan).value();
  EXPECT_EQ(f.plan.values[f.shape].kind, MemoryKind::kPrecomputed);
  EXPECT_TRUE(validate_plan(f.graph, f.plan).is_ok());
  return f;
}

Status validate(const ShapeFixture& f) {
  return validate_plan(f.graph, f.plan);
}

TEST(ValidatePlan, RejectsAPrecomputedValueWithoutItsTensor) {
  ShapeFixture f = make_shape_fixture();
  f.plan.precomputed.clear();
  EXPECT_NE(validate(f).message().find("is precomputed but has no tensor"),
            std::string::npos)
      << validate(f).message();
}

TEST(ValidatePlan, RejectsAPrecomputedTensorOfAnotherType) {
  ShapeFixture f = make_shape_fixture();
  f.plan.precomputed[0].second = Tensor::from_vector<int64_t>({1}, {3});
  EXPECT_NE(validate(f).message().find("does not match the plan"),
            std::string::npos)
      << validate(f).message();
}

TEST(ValidatePlan, RejectsSkippingANodeThatIsNotPrecomputed) {
  ShapeFixture f = make_shape_fixture();
  for (size_t n = 0; n < f.graph.nodes.size(); ++n) {
    f.plan.precomputed_nodes[n] = !f.plan.precomputed_nodes[n];
  }
  EXPECT_NE(validate(f).message().find("skipped but"), std::string::npos)
      << validate(f).message();
}

TEST(ValidatePlan, AcceptsThePlannersPlan) {
  Fixture f = make_fixture();
  EXPECT_TRUE(validate_plan(f.graph, f.plan).is_ok());
}

TEST(ValidatePlan, RejectsLiveValuesSharingBytes) {
  Fixture f = make_fixture();
  f.plan.values[f.r].offset = f.plan.values[f.a].offset;
  expect_invalid(f, "share arena bytes while both are alive");
}

TEST(ValidatePlan, RejectsAnInPlaceWriteOverAValueReadLater) {
  Fixture f = make_fixture();
  f.plan.values[f.r].offset = f.plan.values[f.a].offset;
  f.plan.values[f.r].alias_of = f.a;
  f.plan.values[f.r].in_place = true;
  expect_invalid(f, "share arena bytes while both are alive");
}

TEST(ValidatePlan, RejectsAnAliasTheOpCannotTake) {
  Fixture f = make_fixture();
  // s comes from Add, which makes no views.
  f.plan.values[f.s].alias_of = f.r;
  f.plan.values[f.s].in_place = false;
  expect_invalid(f, "may not alias 'r' as a view");
}

TEST(ValidatePlan, RejectsAnAliasOfCallerBoundMemory) {
  Fixture f = make_fixture();
  const ValueId y = f.graph.outputs[0];
  f.plan.values[y].alias_of = f.s;
  expect_invalid(f, "value 'y' is io: only a node's transient output");
}

TEST(ValidatePlan, RejectsABlockPastThePeak) {
  Fixture f = make_fixture();
  f.plan.peak_arena_bytes = 64;
  expect_invalid(f, "do not fit");
}

TEST(ValidatePlan, RejectsAMisalignedOffset) {
  Fixture f = make_fixture();
  f.plan.values[f.a].offset += 4;
  expect_invalid(f, "do not fit");
}

TEST(ValidatePlan, RejectsAWrongNaiveSum) {
  Fixture f = make_fixture();
  f.plan.naive_arena_bytes += 64;
  expect_invalid(f, "naive sum");
}

TEST(ValidatePlan, RejectsAPeakAboveTheNaiveSum) {
  Fixture f = make_fixture();
  f.plan.peak_arena_bytes = f.plan.naive_arena_bytes + 64;
  expect_invalid(f, "exceeds the naive sum");
}

TEST(ValidatePlan, RejectsWrongKindsLifetimesAndSizes) {
  Fixture kind = make_fixture();
  kind.plan.values[kind.a].kind = MemoryKind::kIo;
  expect_invalid(kind, "value 'a' is arena but planned as io");

  Fixture lifetime = make_fixture();
  lifetime.plan.values[lifetime.a].last_step = 1;
  expect_invalid(lifetime, "value 'a' lives over steps 0..2");

  Fixture size = make_fixture();
  size.plan.values[size.r].bytes = 32;
  expect_invalid(size, "value 'r': 32 bytes planned");

  Fixture dims = make_fixture();
  dims.plan.values[dims.r].dims = {2, 8};
  expect_invalid(dims, "value 'r' is f32 (4,4) but planned as f32 (2,8)");
}

TEST(ValidatePlan, RejectsAScheduleThatIsNotADependencyOrder) {
  Fixture f = make_fixture();
  std::swap(f.plan.schedule[0], f.plan.schedule[1]);
  expect_invalid(f, "before it is produced");
}

}  // namespace
}  // namespace seqrt
