#include <gtest/gtest.h>

#include "compiler/passes/match.h"
#include "compiler/passes/pass_test_util.h"

namespace seqrt {
namespace {

using pass_testing::build_or_die;
using pass_testing::count_ops;
using pass_testing::expect_fused;
using pass_testing::expect_unchanged;
using pass_testing::random_tensor;

constexpr int64_t kK = 16;

const Node* find_op(const Graph& graph, const std::string& op) {
  for (const Node& node : graph.nodes) {
    if (node.op == op) return &node;
  }
  return nullptr;
}

ValueId linear(GraphBuilder& b, ValueId x, ValueId w, ValueId bias,
               const std::string& activation) {
  std::vector<ValueId> inputs = {x, w};
  if (bias != kNoValue) inputs.push_back(bias);
  AttrMap attrs;
  if (!activation.empty()) attrs["activation"] = Attribute(activation);
  return b.add("Linear", inputs, attrs, NodeOptions{"", kSeqrtDomain, {}});
}

// A quantized Linear of X (K = kK, 4-bit codes in one block of 16) with n
// outputs: seeded codes and scales, zero points when asked.
ValueId quantized_linear(GraphBuilder& b, ValueId x, int64_t n, uint32_t seed,
                         bool zero_points, int64_t activation_bits,
                         ValueId bias = kNoValue) {
  constexpr int64_t kBlock = 16, kBlocks = kK / kBlock;
  std::vector<uint8_t> codes(static_cast<size_t>(n * kK / 2));
  std::vector<uint8_t> zps(static_cast<size_t>(n * kBlocks));
  uint32_t state = seed;
  for (uint8_t& c : codes)
    c = static_cast<uint8_t>((state = state * 1664525u + 1013904223u) >> 24);
  for (uint8_t& z : zps)
    z = static_cast<uint8_t>((state = state * 1664525u + 1013904223u) >> 28);
  const std::string id = std::to_string(seed);
  std::vector<ValueId> inputs = {
      x,
      b.constant("codes" + id,
                 Tensor::from_vector<uint8_t>({n, kK / 2}, codes)),
      bias, b.constant("scale" + id, random_tensor({n, kBlocks}, seed))};
  if (zero_points) {
    inputs.push_back(
        b.constant("zp" + id, Tensor::from_vector<uint8_t>({n, kBlocks}, zps)));
  }
  AttrMap attrs = {{"bits", Attribute(int64_t{4})},
                   {"block_size", Attribute(kBlock)},
                   {"K", Attribute(kK)}};
  if (activation_bits != 0)
    attrs["activation_bits"] = Attribute(activation_bits);
  return b.add("Linear", inputs, attrs, NodeOptions{"", kSeqrtDomain, {}});
}

// Llama's attention input: q, k and v projections of one X, GQA-sized (k
// and v narrower than q), read in between by other nodes.
TEST(FuseSiblingLinears, FusesThreeMatMulsWithDifferentWidths) {
  GraphBuilder b("qkv");
  ValueId x =
      b.input("x", DType::kF32, {Dim::symbol("batch"), Dim(5), Dim(kK)});
  ValueId q = b.add("MatMul", {x, b.constant("wq", random_tensor({kK, 12}, 1))},
                    {}, NodeOptions{"q_proj", kOnnxDomain, {}});
  b.output(b.add("Neg", {q}), "q");
  ValueId k = b.add("MatMul", {x, b.constant("wk", random_tensor({kK, 4}, 2))},
                    {}, NodeOptions{"k_proj", kOnnxDomain, {}});
  b.output(k, "k");
  ValueId v = b.add("MatMul", {x, b.constant("wv", random_tensor({kK, 4}, 3))},
                    {}, NodeOptions{"v_proj", kOnnxDomain, {}});
  b.output(b.add("Relu", {v}), "v");
  Graph graph = build_or_die(std::move(b));
  Graph fused = expect_fused(graph, fuse_sibling_linears_pass(), "Split", 1,
                             {{"x", random_tensor({3, 5, kK}, 4)}});
  EXPECT_EQ(count_ops(fused, "MatMul"), 1u);
  const Node* matmul = find_op(fused, "MatMul");
  ASSERT_NE(matmul, nullptr);
  EXPECT_EQ(matmul->name, "q_proj.fused");
  EXPECT_EQ(fused.value(matmul->inputs[1]).name, "q_proj.fused_weight");
  const Tensor* weight = fused.constant(matmul->inputs[1]);
  ASSERT_NE(weight, nullptr);
  EXPECT_EQ(weight->dims(), (std::vector<int64_t>{kK, 20}));
  const Node* split = find_op(fused, "Split");
  ASSERT_NE(split, nullptr);
  ASSERT_EQ(split->outputs.size(), 3u);
  EXPECT_EQ(fused.value(split->outputs[1]).name, "k");
  const Tensor* sizes = fused.constant(split->inputs[1]);
  ASSERT_NE(sizes, nullptr);
  EXPECT_EQ(sizes->element_i64(0), 12);
  EXPECT_EQ(sizes->element_i64(1), 4);
  EXPECT_EQ(sizes->element_i64(2), 4);
  EXPECT_EQ(fused.value(split->outputs[0]).shape->to_string(),
            Shape({Dim::symbol("batch"), Dim(5), Dim(12)}).to_string());
}

TEST(FuseSiblingLinears, FusesLinearsWithBiasesAndOneActivation) {
  GraphBuilder b("gate_up");
  ValueId x = b.input("x", DType::kF32, {2, 3, kK});
  ValueId gate = linear(b, x, b.constant("wg", random_tensor({kK, 10}, 5)),
                        b.constant("bg", random_tensor({10}, 6)), "silu");
  ValueId up = linear(b, x, b.constant("wu", random_tensor({kK, 6}, 7)),
                      b.constant("bu", random_tensor({6}, 8)), "silu");
  b.output(gate, "gate");
  b.output(up, "up");
  Graph fused =
      expect_fused(build_or_die(std::move(b)), fuse_sibling_linears_pass(),
                   "Linear", 1, {{"x", random_tensor({2, 3, kK}, 9)}});
  const Node* node = find_op(fused, "Linear");
  ASSERT_NE(node, nullptr);
  ASSERT_EQ(node->inputs.size(), 3u);
  EXPECT_EQ(node->attrs.at("activation").as_string(), "silu");
  EXPECT_EQ(fused.constant(node->inputs[2])->dims(), std::vector<int64_t>{16});
  EXPECT_EQ(count_ops(fused, "Split"), 1u);
}

// The bias of the sibling without one is zeros; no activation on either.
TEST(FuseSiblingLinears, GivesABiaslessSiblingZeroBias) {
  GraphBuilder b("mixed_bias");
  ValueId x = b.input("x", DType::kF32, {4, kK});
  ValueId biased = linear(b, x, b.constant("w0", random_tensor({kK, 3}, 10)),
                          b.constant("b0", random_tensor({3}, 11)), "");
  ValueId plain =
      linear(b, x, b.constant("w1", random_tensor({kK, 5}, 12)), kNoValue, "");
  b.output(b.add("Add", {biased, biased}), "y0");
  b.output(plain, "y1");
  Graph fused =
      expect_fused(build_or_die(std::move(b)), fuse_sibling_linears_pass(),
                   "Linear", 1, {{"x", random_tensor({4, kK}, 13)}});
  const Node* node = find_op(fused, "Linear");
  ASSERT_NE(node, nullptr);
  ASSERT_EQ(node->inputs.size(), 3u);
  const Tensor* bias = fused.constant(node->inputs[2]);
  ASSERT_NE(bias, nullptr);
  ASSERT_EQ(bias->dims(), std::vector<int64_t>{8});
  for (int64_t i = 3; i < 8; ++i) EXPECT_EQ(bias->element_f64(i), 0.0);
}

// Whisper's attention: q and v with biases (Linears after fuse_linear), k
// without (left a MatMul). The MatMul joins as a Linear with zero bias.
TEST(FuseSiblingLinears, JoinsAMatMulToLinearsWithoutActivation) {
  GraphBuilder b("whisper_qkv");
  ValueId x = b.input("x", DType::kF32, {2, 3, kK});
  ValueId q = linear(b, x, b.constant("wq", random_tensor({kK, 8}, 31)),
                     b.constant("bq", random_tensor({8}, 32)), "none");
  ValueId k =
      b.add("MatMul", {x, b.constant("wk", random_tensor({kK, 8}, 33))});
  ValueId v = linear(b, x, b.constant("wv", random_tensor({kK, 8}, 34)),
                     b.constant("bv", random_tensor({8}, 35)), "");
  b.output(q, "q");
  b.output(k, "k");
  b.output(v, "v");
  Graph fused =
      expect_fused(build_or_die(std::move(b)), fuse_sibling_linears_pass(),
                   "Linear", 1, {{"x", random_tensor({2, 3, kK}, 36)}});
  EXPECT_EQ(count_ops(fused, "MatMul"), 0u);
  const Node* node = find_op(fused, "Linear");
  ASSERT_NE(node, nullptr);
  ASSERT_EQ(node->inputs.size(), 3u);
  const Tensor* bias = fused.constant(node->inputs[2]);
  ASSERT_NE(bias, nullptr);
  for (int64_t i = 8; i < 16; ++i) EXPECT_EQ(bias->element_f64(i), 0.0);
  EXPECT_NE(bias->element_f64(16), 0.0);
}

// Two Linears without any bias stay without one.
TEST(FuseSiblingLinears, AddsNoBiasWhenNoSiblingHasOne) {
  GraphBuilder b("no_bias");
  ValueId x = b.input("x", DType::kF32, {kK});
  b.output(linear(b, x, b.constant("w0", random_tensor({kK, 3}, 14)), kNoValue,
                  "relu"),
           "y0");
  b.output(linear(b, x, b.constant("w1", random_tensor({kK, 2}, 15)), kNoValue,
                  "relu"),
           "y1");
  Graph fused =
      expect_fused(build_or_die(std::move(b)), fuse_sibling_linears_pass(),
                   "Linear", 1, {{"x", random_tensor({kK}, 16)}});
  ASSERT_NE(find_op(fused, "Linear"), nullptr);
  EXPECT_EQ(find_op(fused, "Linear")->inputs.size(), 2u);
}

TEST(FuseSiblingLinears, LeavesSiblingsThatDiffer) {
  {  // different activations
    GraphBuilder b("acts");
    ValueId x = b.input("x", DType::kF32, {3, kK});
    b.output(linear(b, x, b.constant("w0", random_tensor({kK, 4}, 17)),
                    kNoValue, "relu"),
             "y0");
    b.output(linear(b, x, b.constant("w1", random_tensor({kK, 4}, 18)),
                    kNoValue, "silu"),
             "y1");
    expect_unchanged(build_or_die(std::move(b)), fuse_sibling_linears_pass());
  }
  {  // a MatMul (no activation) beside a Linear with one
    GraphBuilder b("kinds");
    ValueId x = b.input("x", DType::kF32, {3, kK});
    b.output(b.add("MatMul", {x, b.constant("w0", random_tensor({kK, 4}, 19))}),
             "y0");
    b.output(linear(b, x, b.constant("w1", random_tensor({kK, 4}, 20)),
                    kNoValue, "silu"),
             "y1");
    expect_unchanged(build_or_die(std::move(b)), fuse_sibling_linears_pass());
  }
  {  // one weight computed at run time
    GraphBuilder b("runtime_w");
    ValueId x = b.input("x", DType::kF32, {3, kK});
    ValueId w = b.input("w", DType::kF32, {kK, 4});
    b.output(b.add("MatMul", {x, w}), "y0");
    b.output(b.add("MatMul", {x, b.constant("w1", random_tensor({kK, 4}, 21))}),
             "y1");
    expect_unchanged(build_or_die(std::move(b)), fuse_sibling_linears_pass());
  }
  {  // different inputs
    GraphBuilder b("two_x");
    ValueId x0 = b.input("x0", DType::kF32, {3, kK});
    ValueId x1 = b.input("x1", DType::kF32, {3, kK});
    b.output(
        b.add("MatMul", {x0, b.constant("w0", random_tensor({kK, 4}, 22))}),
        "y0");
    b.output(
        b.add("MatMul", {x1, b.constant("w1", random_tensor({kK, 4}, 23))}),
        "y1");
    expect_unchanged(build_or_die(std::move(b)), fuse_sibling_linears_pass());
  }
  {  // a single product
    GraphBuilder b("single");
    ValueId x = b.input("x", DType::kF32, {3, kK});
    b.output(b.add("MatMul", {x, b.constant("w", random_tensor({kK, 4}, 24))}),
             "y");
    expect_unchanged(build_or_die(std::move(b)), fuse_sibling_linears_pass());
  }
  {  // X on the right: X·W needs X first
    GraphBuilder b("x_right");
    ValueId x = b.input("x", DType::kF32, {kK, kK});
    b.output(b.add("MatMul", {b.constant("w0", random_tensor({4, kK}, 25)), x}),
             "y0");
    b.output(b.add("MatMul", {b.constant("w1", random_tensor({4, kK}, 26)), x}),
             "y1");
    expect_unchanged(build_or_die(std::move(b)), fuse_sibling_linears_pass());
  }
}

// A MatMulNBits file's q/k/v: quantized Linears of one X, their codes,
// scales and zero points stacked along N; one has a bias.
TEST(FuseSiblingLinears, FusesQuantizedLinears) {
  for (int64_t activation_bits : {0, 8}) {
    GraphBuilder b("quantized_qkv");
    ValueId x = b.input("x", DType::kF32, {Dim::symbol("batch"), Dim(kK)});
    b.output(quantized_linear(b, x, 12, 41, true, activation_bits), "q");
    b.output(quantized_linear(b, x, 4, 42, true, activation_bits,
                              b.constant("bk", random_tensor({4}, 43))),
             "k");
    b.output(quantized_linear(b, x, 6, 44, true, activation_bits), "v");
    Graph fused =
        expect_fused(build_or_die(std::move(b)), fuse_sibling_linears_pass(),
                     "Linear", 1, {{"x", random_tensor({3, kK}, 45)}});
    const Node* node = find_op(fused, "Linear");
    ASSERT_NE(node, nullptr);
    ASSERT_EQ(node->inputs.size(), 5u);
    EXPECT_EQ(node->attrs.at("bits").as_int(), 4);
    EXPECT_EQ(int_attr(*node, "activation_bits", 0), activation_bits);
    EXPECT_EQ(fused.constant(node->inputs[1])->dims(),
              (std::vector<int64_t>{22, kK / 2}));
    EXPECT_EQ(fused.constant(node->inputs[3])->dims(),
              (std::vector<int64_t>{22, 1}));
    EXPECT_EQ(fused.constant(node->inputs[4])->dims(),
              (std::vector<int64_t>{22, 1}));
    const Tensor* bias = fused.constant(node->inputs[2]);
    ASSERT_NE(bias, nullptr);
    EXPECT_EQ(bias->element_f64(0), 0.0);
    EXPECT_NE(bias->element_f64(12), 0.0);
  }
}

TEST(FuseSiblingLinears, LeavesQuantizedSiblingsThatDiffer) {
  {  // zero points on one only
    GraphBuilder b("zero_points");
    ValueId x = b.input("x", DType::kF32, {2, kK});
    b.output(quantized_linear(b, x, 4, 46, true, 0), "y0");
    b.output(quantized_linear(b, x, 4, 47, false, 0), "y1");
    expect_unchanged(build_or_die(std::move(b)), fuse_sibling_linears_pass());
  }
  {  // int8 activations on one only
    GraphBuilder b("activations");
    ValueId x = b.input("x", DType::kF32, {2, kK});
    b.output(quantized_linear(b, x, 4, 48, false, 8), "y0");
    b.output(quantized_linear(b, x, 4, 49, false, 0), "y1");
    expect_unchanged(build_or_die(std::move(b)), fuse_sibling_linears_pass());
  }
  {  // a quantized Linear beside a float MatMul
    GraphBuilder b("float_beside");
    ValueId x = b.input("x", DType::kF32, {2, kK});
    b.output(quantized_linear(b, x, 4, 50, false, 0), "y0");
    b.output(b.add("MatMul", {x, b.constant("w", random_tensor({kK, 4}, 51))}),
             "y1");
    expect_unchanged(build_or_die(std::move(b)), fuse_sibling_linears_pass());
  }
}

// Three (1024, 8192) f32 weights would concatenate to 96 MiB, over 64 MiB.
TEST(FuseSiblingLinears, LeavesGroupsOverTheWeightLimit) {
  GraphBuilder b("large");
  ValueId x = b.input("x", DType::kF32, {1, 1024});
  for (int i = 0; i < 3; ++i) {
    Result<Tensor> w = Tensor::allocate(DType::kF32, {1024, 8192});
    ASSERT_TRUE(w.is_ok());
    b.output(b.add("MatMul", {x, b.constant("w" + std::to_string(i), *w)}),
             "y" + std::to_string(i));
  }
  expect_unchanged(build_or_die(std::move(b)), fuse_sibling_linears_pass());
}

// In the default pipeline the q/k/v MatMuls of one input end up as one
// MatMul and a Split, with the same outputs.
TEST(FuseSiblingLinears, RunsInTheDefaultPipeline) {
  GraphBuilder b("pipeline");
  ValueId x = b.input("x", DType::kF32, {2, kK});
  ValueId q =
      b.add("MatMul", {x, b.constant("wq", random_tensor({kK, 8}, 27))});
  ValueId k =
      b.add("MatMul", {x, b.constant("wk", random_tensor({kK, 4}, 28))});
  ValueId v =
      b.add("MatMul", {x, b.constant("wv", random_tensor({kK, 4}, 29))});
  b.output(b.add("Concat", {q, k, v}, {{"axis", int64_t{-1}}}), "y");
  Graph graph = build_or_die(std::move(b));
  Graph optimized = pass_testing::apply(graph, default_passes());
  EXPECT_EQ(count_ops(optimized, "MatMul"), 1u);
  EXPECT_EQ(count_ops(optimized, "Split"), 1u);
  std::map<std::string, Tensor> feeds = {{"x", random_tensor({2, kK}, 30)}};
  pass_testing::expect_close(
      pass_testing::run_reference(optimized, feeds).at("y"),
      pass_testing::run_reference(graph, feeds).at("y"));
}

}  // namespace
}  // namespace seqrt
