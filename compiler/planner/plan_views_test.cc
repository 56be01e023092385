// Slices planned as views of their input, and values whose size is known
// only at run time (kDynamic): the planner's choices and the validator's
// checks of both.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "graph/builder.h"
#include "compiler/planner/memory_plan.h"

namespace seqrt {
namespace {

ValueId ints(GraphBuilder& b, const std::string& name,
             std::vector<int64_t> values) {
  const int64_t n = static_cast<int64_t>(values.size());
  return b.constant(name, Tensor::from_vector<int64_t>({n}, values));
}

// Slice(data, starts, ends, axes[, steps]) named `name`.
ValueId slice(GraphBuilder& b, ValueId data, const std::string& name,
              std::vector<int64_t> starts, std::vector<int64_t> ends,
              std::vector<int64_t> axes, std::vector<int64_t> steps = {}) {
  std::vector<ValueId> inputs = {data, ints(b, name + "_starts", starts),
                                 ints(b, name + "_ends", ends),
                                 ints(b, name + "_axes", axes)};
  if (!steps.empty()) inputs.push_back(ints(b, name + "_steps", steps));
  return b.add("Slice", inputs, {}, {name});
}

struct Planned {
  Graph graph;
  MemoryPlan plan;
  const ValuePlan& operator[](const std::string& name) const {
    const ValueId id = graph.find_value(name);
    EXPECT_NE(id, kNoValue) << name;
    return plan.values.at(id);
  }
  ValuePlan& at(const std::string& name) {
    return plan.values.at(graph.find_value(name));
  }
  ValueId id(const std::string& name) const { return graph.find_value(name); }
};

Planned plan_or_fail(GraphBuilder&& builder) {
  Planned p;
  Result<Graph> graph = std::move(builder).build();
  EXPECT_TRUE(graph.is_ok()) << graph.status().to_string();
  if (!graph.is_ok()) return p;
  p.graph = std::move(graph).value();
  Result<MemoryPlan> plan = plan_memory(p.graph, {});
  EXPECT_TRUE(plan.is_ok()) << plan.status().to_string();
  if (!plan.is_ok()) return p;
  p.plan = std::move(plan).value();
  Status valid = validate_plan(p.graph, p.plan);
  EXPECT_TRUE(valid.is_ok()) << valid.to_string();
  return p;
}

void expect_invalid(const Planned& p, const std::string& fragment) {
  Status status = validate_plan(p.graph, p.plan);
  ASSERT_FALSE(status.is_ok()) << "expected an error with: " << fragment;
  EXPECT_NE(status.message().find(fragment), std::string::npos)
      << status.message();
}

// a = Neg(x), x (4,8) f32: 128 bytes, rows of 32. Slices of it, some one
// contiguous run of a's bytes, some not; then t = Neg(back), made after
// every Slice, and each slice is read again only after t, as
// Softmax(Mul(slice, ReduceSum(t))): while t is alive, only views of a are.
Planned plan_slices() {
  GraphBuilder b("slices");
  ValueId x = b.input("x", DType::kF32, {4, 8});
  ValueId a = b.add("Neg", {x}, {}, {"a"});
  ValueId rows = slice(b, a, "rows", {2}, {4}, {0});         // (2,8)
  ValueId cols = slice(b, a, "cols", {1}, {3}, {1});         // (4,2)
  ValueId run = slice(b, a, "run", {3, 2}, {4, 6}, {0, 1});  // (1,4)
  ValueId back = slice(b, a, "back", {3}, {0}, {0}, {-1});   // (3,8)
  ValueId from_x = slice(b, x, "from_x", {-1}, {100}, {0});  // (1,8)
  ValueId t = b.add("Neg", {back}, {}, {"t"});
  ValueId sum =
      b.add("ReduceSum", {t}, {{"keepdims", Attribute(int64_t{0})}}, {"sum"});
  for (ValueId v : {rows, cols, run, back, from_x}) {
    const std::string name = b.graph().value(v).name;
    ValueId scaled = b.add("Mul", {v, sum}, {}, {name + "_scaled"});
    b.output(b.add("Softmax", {scaled}, {}, {name + "_y"}));
  }
  return plan_or_fail(std::move(b));
}

TEST(PlanSliceViews, OneContiguousRunIsAViewAtItsByteOffset) {
  Planned p = plan_slices();
  const ValuePlan& a = p["a"];
  EXPECT_EQ(p["rows"].kind, MemoryKind::kArena);
  EXPECT_EQ(p["rows"].alias_of, p.id("a"));
  EXPECT_FALSE(p["rows"].in_place);
  EXPECT_EQ(p["rows"].offset, a.offset + 2 * 32);
  // Row 3, columns 2..5: not 64-byte aligned, and exact all the same.
  EXPECT_EQ(p["run"].alias_of, p.id("a"));
  EXPECT_EQ(p["run"].offset, a.offset + (3 * 8 + 2) * 4);
  // A slice of the caller's input is a view of it, with no arena bytes.
  EXPECT_EQ(p["from_x"].kind, MemoryKind::kIo);
  EXPECT_EQ(p["from_x"].alias_of, p.id("x"));
}

TEST(PlanSliceViews, GapsAndBackwardStepsAreCopies) {
  Planned p = plan_slices();
  EXPECT_EQ(p["cols"].alias_of, kNoValue);
  EXPECT_EQ(p["back"].alias_of, kNoValue);
  EXPECT_EQ(p["back"].dims, (std::vector<int64_t>{3, 8}));
}

TEST(PlanSliceViews, TheInputStaysAliveAsLongAsItsViews) {
  Planned p = plan_slices();
  // a is last read directly by the Slices, but its views rows and run are
  // read after t is made, so t may not take a's bytes.
  EXPECT_LT(p["a"].last_step, p["t"].first_step);
  EXPECT_GT(p["rows"].last_step, p["t"].last_step);
  const ValuePlan& t = p["t"];
  const ValuePlan& a = p["a"];
  EXPECT_TRUE(t.offset >= a.offset + a.bytes || a.offset >= t.offset + t.bytes)
      << "t at " << t.offset << ", a at " << a.offset;
}

TEST(PlanSliceViews, ViewsOfSliceViewsKeepTheRunsOffset) {
  GraphBuilder b("chain");
  ValueId x = b.input("x", DType::kF32, {4, 8});
  ValueId a = b.add("Neg", {x}, {}, {"a"});
  ValueId rows = slice(b, a, "rows", {1}, {3}, {0});  // (2,8) at byte 32
  ValueId flat =
      b.add("Reshape", {rows, ints(b, "flat_shape", {16})}, {}, {"flat"});
  ValueId tail = slice(b, flat, "tail", {12}, {16}, {0});  // 16 bytes on
  b.output(b.add("Softmax", {tail}, {}, {"y"}));
  Planned p = plan_or_fail(std::move(b));
  EXPECT_EQ(p["flat"].alias_of, p.id("rows"));
  EXPECT_EQ(p["flat"].offset, p["a"].offset + 32);
  EXPECT_EQ(p["tail"].alias_of, p.id("flat"));
  EXPECT_EQ(p["tail"].offset, p["a"].offset + 32 + 12 * 4);
  EXPECT_EQ(p.plan.peak_arena_bytes, 128);
}

TEST(PlanSliceViews, ValidatorRejectsAViewAtAnotherOffset) {
  Planned p = plan_slices();
  p.at("rows").offset = p["a"].offset;
  expect_invalid(p, "aliases 'a' but sits at offset");
}

TEST(PlanSliceViews, ValidatorRejectsAViewOfASliceWithGaps) {
  Planned p = plan_slices();
  ValuePlan& cols = p.at("cols");
  cols.alias_of = p.id("a");
  cols.offset = p["a"].offset + 4;
  expect_invalid(p, "may not alias 'a' as a view");
}

// r = Reshape(Neg(x), shape) with `shape` a run-time input: r's dims are
// unknown before run time, and so are those of everything computed from it.
Planned plan_dynamic() {
  GraphBuilder b("dynamic");
  ValueId x = b.input("x", DType::kF32, {4, 4});
  ValueId shape = b.input("shape", DType::kI64, {2});
  ValueId n = b.add("Neg", {x}, {}, {"n"});
  ValueId r = b.add("Reshape", {n, shape}, {}, {"r"});
  ValueId e = b.add("Exp", {r}, {}, {"e"});
  ValueId flat =
      b.add("Reshape", {e, ints(b, "minus_one", {-1})}, {}, {"flat"});
  b.output(b.add("Relu", {flat}, {}, {"y"}));
  b.output(b.add("Softmax", {b.add("Transpose", {x}, {}, {"t"})}, {}, {"z"}));
  return plan_or_fail(std::move(b));
}

TEST(PlanDynamic, DataDependentSizesAreDynamicAndTheRestIsPlanned) {
  Planned p = plan_dynamic();
  for (const char* name : {"r", "e", "flat"}) {
    EXPECT_EQ(p[name].kind, MemoryKind::kDynamic) << name;
    EXPECT_EQ(p[name].bytes, -1) << name;
    EXPECT_TRUE(p[name].dims.empty()) << name;
    EXPECT_EQ(p[name].dtype, DType::kF32) << name;
  }
  // A graph output of run-time size stays the caller's, size unknown.
  EXPECT_EQ(p["y"].kind, MemoryKind::kIo);
  EXPECT_EQ(p["y"].bytes, -1);
  EXPECT_EQ(p["n"].kind, MemoryKind::kArena);
  EXPECT_EQ(p["t"].kind, MemoryKind::kArena);
  EXPECT_EQ(p["t"].bytes, 64);
  EXPECT_EQ(p.plan.naive_arena_bytes, 128);
  EXPECT_EQ(std::string(memory_kind_name(MemoryKind::kDynamic)), "dynamic");
}

TEST(PlanDynamic, ValidatorRejectsDynamicKnownSizesAndSizedDynamics) {
  Planned known = plan_dynamic();
  known.at("t").kind = MemoryKind::kDynamic;
  expect_invalid(known, "value 't' is planned as dynamic but its size");

  Planned sized = plan_dynamic();
  sized.at("e").bytes = 64;
  expect_invalid(sized, "value 'e' has a size known only at run time");
}

}  // namespace
}  // namespace seqrt
