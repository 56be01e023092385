// Inference of shapes through small integer tensors known symbolically
// (ops/symbolic_value.h) on small hand-built graphs.
#include <gtest/gtest.h>

#include "compiler/infer/infer_graph.h"
#include "compiler/planner/bind_dims.h"
#include "graph/builder.h"
#include "graph/dim_expr.h"

namespace seqrt {
namespace {

Dim sym(const char* name) { return Dim::symbol(name); }

Tensor i64s(std::vector<int64_t> values) {
  int64_t n = static_cast<int64_t>(values.size());
  return Tensor::from_vector<int64_t>({n}, values);
}

// A builder with ids (batch,seq) and keys (batch,4,past,16).
class SymbolicInfer : public ::testing::Test {
 protected:
  SymbolicInfer() {
    ids_ = b_.input("ids", DType::kI64, {sym("batch"), sym("seq")});
    keys_ = b_.input("keys", DType::kF32, {sym("batch"), 4, sym("past"), 16});
  }
  ValueId constant(std::vector<int64_t> values) {
    return b_.constant("c" + std::to_string(next_++), i64s(std::move(values)));
  }
  ValueId scalar(int64_t value) {
    return b_.constant("c" + std::to_string(next_++),
                       Tensor::scalar<int64_t>(value));
  }
  // dim `d` of `x` as a 1-D tensor [d], the way exports compute it.
  ValueId dim_of(ValueId x, int64_t d) {
    ValueId gathered = b_.add("Gather", {b_.add("Shape", {x}), scalar(d)});
    return b_.add("Unsqueeze", {gathered, constant({0})});
  }
  // Infers and returns the shape of `id`.
  Shape shape_of(ValueId id) {
    Status status = infer_graph(b_.graph());
    EXPECT_TRUE(status.is_ok()) << status.to_string();
    const Value& value = b_.graph().value(id);
    return value.shape ? *value.shape : Shape({Dim(999999)});
  }

  GraphBuilder b_;
  ValueId ids_, keys_;
  int next_ = 0;
};

TEST_F(SymbolicInfer, ReshapeMinusOneCancelsSymbols) {
  // Reshape(ids, Concat([-1], [seq])) is (batch, seq).
  ValueId shape = b_.add("Concat", {constant({-1}), dim_of(ids_, 1)},
                         {{"axis", int64_t{0}}});
  ValueId out = b_.add("Reshape", {ids_, shape});
  EXPECT_EQ(shape_of(out), Shape({sym("batch"), sym("seq")}));
}

TEST_F(SymbolicInfer, ReshapeMinusOneThatDoesNotReduceStaysUnknown) {
  // (batch,seq) to (-1, 3): batch*seq/3 does not reduce.
  ValueId out = b_.add("Reshape", {ids_, constant({-1, 3})});
  EXPECT_EQ(shape_of(out), Shape({Dim(), 3}));
  // (batch,seq) to (-1, past): no cancellation either.
  ValueId shape2 = b_.add("Concat", {constant({-1}), dim_of(keys_, 2)},
                          {{"axis", int64_t{0}}});
  ValueId out2 = b_.add("Reshape", {ids_, shape2});
  EXPECT_EQ(shape_of(out2), Shape({Dim(), sym("past")}));
}

TEST_F(SymbolicInfer, ReshapeMergesAndSplitsSymbolicDims) {
  // keys to (batch, 4*past, 16) via Mul on shape elements, then back.
  ValueId merged = b_.add("Mul", {dim_of(keys_, 2), constant({4})});
  ValueId shape = b_.add("Concat", {dim_of(keys_, 0), merged, constant({16})},
                         {{"axis", int64_t{0}}});
  ValueId flat = b_.add("Reshape", {keys_, shape});
  ValueId back = b_.add("Reshape", {flat, constant({0, 4, -1, 16})});
  EXPECT_EQ(shape_of(flat), Shape({sym("batch"), dim_mul(sym("past"), 4), 16}));
  EXPECT_EQ(shape_of(back), Shape({sym("batch"), 4, sym("past"), 16}));
}

TEST_F(SymbolicInfer, ConcatOfDataSumsDims) {
  ValueId news =
      b_.input("new", DType::kF32, {sym("batch"), 4, sym("seq"), 16});
  ValueId all = b_.add("Concat", {keys_, news}, {{"axis", int64_t{-2}}});
  Shape shape = shape_of(all);
  EXPECT_EQ(shape, Shape({sym("batch"), 4, sym("past+seq"), 16}));
  EXPECT_TRUE(is_derived_dim(shape[2]));
  ValueId unknown = b_.input("u", DType::kF32, {sym("batch"), 4, Dim(), 16});
  ValueId some = b_.add("Concat", {keys_, unknown}, {{"axis", int64_t{2}}});
  EXPECT_EQ(shape_of(some)[2], Dim());
}

TEST_F(SymbolicInfer, RangeLengthReducesToSeq) {
  // Range(past, past + seq, 1) through Cast, as GPT-2 computes positions.
  ValueId past = b_.add("Gather", {b_.add("Shape", {keys_}), scalar(2)});
  ValueId seq = b_.add("Gather", {b_.add("Shape", {ids_}), scalar(1)});
  ValueId total = b_.add("Add", {seq, past});
  ValueId to_i64 = b_.add("Cast", {past}, {{"to", int64_t{7}}});
  ValueId range = b_.add("Range", {to_i64, total, scalar(1)});
  EXPECT_EQ(shape_of(range), Shape({sym("seq")}));
  // A step of 2 does not divide seq: unknown.
  ValueId stepped = b_.add("Range", {past, total, scalar(2)});
  EXPECT_EQ(shape_of(stepped), Shape({Dim()}));
  // Range(0, seq - 1 + 1, 1).
  ValueId minus = b_.add("Sub", {seq, scalar(1)});
  ValueId plus = b_.add("Add", {minus, scalar(1)});
  EXPECT_EQ(shape_of(b_.add("Range", {scalar(0), plus, scalar(1)})),
            Shape({sym("seq")}));
}

TEST_F(SymbolicInfer, ExpandAndConstantOfShapeReadSymbolicShapes) {
  ValueId shape = b_.add("Shape", {ids_});
  ValueId zeros = b_.add("ConstantOfShape", {shape});
  EXPECT_EQ(shape_of(zeros), Shape({sym("batch"), sym("seq")}));
  ValueId one = b_.constant("one", Tensor::from_vector<float>({1, 1}, {1.0f}));
  ValueId expanded = b_.add("Expand", {one, shape});
  EXPECT_EQ(shape_of(expanded), Shape({sym("batch"), sym("seq")}));
  ValueId tiled = b_.add("Tile", {one, shape});
  EXPECT_EQ(shape_of(tiled), Shape({sym("batch"), sym("seq")}));
}

TEST_F(SymbolicInfer, SliceProducesAndConsumesSymbolicValues) {
  // Shape(keys)[1:3] is [4, past]; a slice of it with a fixed element
  // becomes a known constant.
  ValueId shape = b_.add("Shape", {keys_});
  ValueId part = b_.add("Slice", {shape, constant({1}), constant({3})});
  ValueId four = b_.add("Slice", {part, constant({0}), constant({1})});
  ValueId data =
      b_.add("Reshape", {keys_, b_.add("Concat", {constant({-1}), four},
                                       {{"axis", int64_t{0}}})});
  EXPECT_EQ(shape_of(data),
            Shape({dim_mul(dim_mul(sym("batch"), sym("past")), 16), 4}));
  // The causal-mask slice: rows [past, past+seq) and columns [0, past+seq)
  // of a fixed (64, 64) table.
  ValueId table = b_.constant(
      "table", Tensor::from_vector<float>({64, 64}, std::vector<float>(4096)));
  ValueId past = dim_of(keys_, 2);
  ValueId total = b_.add("Add", {past, dim_of(ids_, 1)});
  ValueId rows = b_.add("Slice", {table, past, total, constant({0})});
  ValueId cols = b_.add("Slice", {rows, constant({0}), total, constant({1})});
  EXPECT_EQ(shape_of(rows), Shape({sym("seq"), 64}));
  EXPECT_EQ(shape_of(cols), Shape({sym("seq"), sym("past+seq")}));
  // Negative step on a symbolic bound: unknown.
  ValueId back = b_.add(
      "Slice", {table, total, constant({0}), constant({0}), constant({-1})});
  EXPECT_EQ(shape_of(back), Shape({Dim(), 64}));
  // A constant start on a symbolic axis: seq - 1.
  ValueId tail = b_.add(
      "Slice", {ids_, constant({1}), constant({INT64_MAX}), constant({1})});
  EXPECT_EQ(shape_of(tail)[1], dim_sub(sym("seq"), 1));
}

TEST_F(SymbolicInfer, SizeAndDivMaxMin) {
  ValueId size = b_.add("Size", {ids_});
  ValueId batch = b_.add("Div", {size, dim_of(ids_, 1)});
  ValueId zeros = b_.add("ConstantOfShape", {batch});
  EXPECT_EQ(shape_of(zeros), Shape({sym("batch")}));
  ValueId seq = dim_of(ids_, 1);
  ValueId seq1 = b_.add("Add", {seq, constant({1})});
  EXPECT_EQ(shape_of(b_.add("ConstantOfShape", {b_.add("Max", {seq, seq1})})),
            Shape({dim_add(sym("seq"), 1)}));
  EXPECT_EQ(shape_of(b_.add("ConstantOfShape", {b_.add("Min", {seq, seq1})})),
            Shape({sym("seq")}));
  // Undecidable: unknown.
  ValueId past = dim_of(keys_, 2);
  EXPECT_EQ(shape_of(b_.add("ConstantOfShape", {b_.add("Max", {seq, past})})),
            Shape({Dim()}));
}

TEST_F(SymbolicInfer, WhereEqualMinusOneIdiomKeepsDims) {
  // Hugging Face repeat_kv's Expand shape: Where(Equal(s, -1), 1, s).
  ValueId s =
      b_.add("Concat", {dim_of(keys_, 0), constant({2}), dim_of(keys_, 2)},
             {{"axis", int64_t{0}}});
  ValueId ones = b_.add("ConstantOfShape", {b_.add("Shape", {s})},
                        {{"value", Tensor::from_vector<int64_t>({1}, {1})}});
  ValueId minus = b_.add("Mul", {ones, constant({-1})});
  ValueId equal = b_.add("Equal", {s, minus});
  ValueId shape = b_.add("Where", {equal, ones, s});
  ValueId x = b_.constant("x", Tensor::from_vector<float>({1, 1, 1}, {1}));
  EXPECT_EQ(shape_of(b_.add("Expand", {x, shape})),
            Shape({sym("batch"), 2, sym("past")}));
  // Undecided (past against seq - 1 may be equal): no value, unknown dims.
  ValueId seq_minus = b_.add("Sub", {dim_of(ids_, 1), constant({1})});
  ValueId undecided = b_.add("Equal", {dim_of(keys_, 2), seq_minus});
  ValueId picked = b_.add("Where", {undecided, dim_of(keys_, 2), seq_minus});
  ValueId target =
      b_.add("Concat", {constant({1, 1}), picked}, {{"axis", int64_t{0}}});
  EXPECT_EQ(shape_of(b_.add("Expand", {x, target}))[2], Dim());
}

TEST_F(SymbolicInfer, FixedElementsBecomeKnownValues) {
  // Gather of a fixed dim of a symbolic shape is a known constant, so ops
  // that read only known values (Split sizes, here Reshape) see it.
  ValueId four = b_.add("Gather", {b_.add("Shape", {keys_}), scalar(1)});
  ValueId shape = b_.add("Unsqueeze", {four, constant({0})});
  ValueId out = b_.add(
      "Reshape",
      {b_.constant("x", Tensor::from_vector<float>({2, 2}, {1, 2, 3, 4})),
       shape});
  EXPECT_EQ(shape_of(out), Shape({4}));
}

TEST_F(SymbolicInfer, BindDimsMakesDerivedDimsConcrete) {
  ValueId news =
      b_.input("new", DType::kF32, {sym("batch"), 4, sym("seq"), 16});
  ValueId all = b_.add("Concat", {keys_, news}, {{"axis", int64_t{2}}});
  b_.output(all, "all");
  ASSERT_TRUE(infer_graph(b_.graph()).is_ok());
  Result<Graph> bound =
      bind_dims(b_.graph(), {{"batch", 1}, {"past", 5}, {"seq", 2}});
  ASSERT_TRUE(bound.is_ok()) << bound.status().to_string();
  EXPECT_EQ(*bound->value(all).shape, Shape({1, 4, 7, 16}));
  EXPECT_FALSE(known_only_at_run_time(bound->value(all)));
  // Unbound atoms are named, never the derived name.
  Result<Graph> partial = bind_dims(b_.graph(), {{"batch", 1}, {"seq", 2}});
  ASSERT_TRUE(partial.is_ok());
  Result<std::vector<int64_t>> dims =
      concrete_dims(partial->value(all), nullptr, {{"batch", 1}, {"seq", 2}});
  ASSERT_FALSE(dims.is_ok());
  EXPECT_NE(dims.status().message().find("bind 'past'"), std::string::npos)
      << dims.status().message();
  EXPECT_EQ(dims.status().message().find("bind 'past+seq'"), std::string::npos);
}

}  // namespace
}  // namespace seqrt
