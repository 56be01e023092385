#include <gtest/gtest.h>

#include <cmath>

#include "ops/sequence/scan_test_util.h"
#include "ops/sequence/selective_scan.h"

namespace seqrt {
namespace {

using op_testing::expect_error;
using op_testing::expect_values;
using op_testing::info;
using op_testing::sym;
using scan_testing::expect_close;
using scan_testing::slice_axis;
using scan_testing::uniform;

Result<std::vector<Tensor>> scan(const std::vector<Tensor>& inputs,
                                 const AttrMap& attrs = {}) {
  return scan_testing::run_op(kSeqrtDomain, "SelectiveScan", inputs, attrs);
}

Tensor f64(std::vector<int64_t> dims, std::vector<double> values) {
  return Tensor::from_vector<double>(std::move(dims), values);
}

TEST(SelectiveScan, HandComputedTwoSteps) {
  // D = N = 1, A = -1, no softplus: h1 = 0.5·1·1 = 0.5, y1 = 0.5·2 + 0.5·1;
  // h2 = e^-1·0.5 + 1·0.5·2, y2 = h2·1 + 0.5·2.
  Tensor u = f64({1, 1, 2}, {1, 2});
  Tensor delta = f64({1, 1, 2}, {0.5, 1.0});
  Tensor a = f64({1, 1}, {-1});
  Tensor bm = f64({1, 1, 1, 2}, {1, 0.5});
  Tensor cm = f64({1, 1, 1, 2}, {2, 1});
  Tensor dskip = f64({1}, {0.5});
  auto out = scan({u, delta, a, bm, cm, dskip}, {{"delta_softplus", 0}});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  double h2 = std::exp(-1.0) * 0.5 + 1.0;
  expect_values((*out)[0], {1.0 + 0.5, h2 + 1.0}, 1e-12);
  expect_values((*out)[1], {h2}, 1e-7);
  EXPECT_EQ((*out)[1].dtype(), DType::kF32);  // no past_state: f32 state
}

TEST(SelectiveScan, SoftplusDeltaBiasAndGate) {
  // Δ = softplus(-0.5 + 0.5) = ln 2; y = ln2·u·B·C (A = 0), gated by
  // silu(z) = z·σ(z).
  Tensor u = f64({1, 1, 1}, {3});
  Tensor delta = f64({1, 1, 1}, {-0.5});
  Tensor a = f64({1, 1}, {0});
  Tensor bm = f64({1, 1, 1, 1}, {2});
  Tensor cm = f64({1, 1, 1, 1}, {0.25});
  Tensor z = f64({1, 1, 1}, {1.5});
  Tensor bias = f64({1}, {0.5});
  auto out = scan({u, delta, a, bm, cm, Tensor(), z, bias});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  double y = std::log(2.0) * 3 * 2 * 0.25;
  expect_values((*out)[0], {y * 1.5 / (1 + std::exp(-1.5))}, 1e-12);
}

TEST(SelectiveScan, LargeDeltaPassesThroughSoftplus) {
  // With A = 0 and B = C = u = 1, y = Δ: 20 still goes through log1p(exp),
  // anything above is passed through exactly.
  Tensor u = f64({1, 1, 3}, {1, 1, 1});
  Tensor delta = f64({1, 1, 3}, {20, 20.5, 80});
  Tensor a = f64({1, 1}, {0});
  Tensor ones = f64({1, 1, 1, 3}, {1, 1, 1});
  Tensor zero_state = f64({1, 1, 1}, {0});
  auto out =
      scan({u, delta, a, ones, ones, Tensor(), Tensor(), Tensor(), zero_state});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  // h accumulates (A = 0): y_t = Σ Δ up to t.
  double d0 = std::log1p(std::exp(20.0));
  EXPECT_NE(d0, 20.0);
  expect_values((*out)[0], {d0, d0 + 20.5, d0 + 20.5 + 80}, 0.0);
  EXPECT_EQ((*out)[1].dtype(), DType::kF64);  // past_state's dtype
}

// Bm of G groups repeated so that each channel has its own group.
Tensor expand_groups(const Tensor& bm, int64_t channels) {
  const int64_t batch = bm.dim(0), groups = bm.dim(1);
  const int64_t inner = bm.dim(2) * bm.dim(3);
  Tensor out =
      Tensor::allocate(bm.dtype(), {batch, channels, bm.dim(2), bm.dim(3)})
          .value();
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t d = 0; d < channels; ++d) {
      int64_t g = d / (channels / groups);
      for (int64_t i = 0; i < inner; ++i) {
        out.set_element_f64((b * channels + d) * inner + i,
                            bm.element_f64((b * groups + g) * inner + i));
      }
    }
  }
  return out;
}

struct Problem {
  Tensor u, delta, a, bm, cm, dskip, z, bias;
};

Problem random_problem(int64_t batch, int64_t channels, int64_t groups,
                       int64_t n, int64_t length, uint64_t seed) {
  return Problem{uniform({batch, channels, length}, seed, -1, 1),
                 uniform({batch, channels, length}, seed + 1, -3, 1),
                 uniform({channels, n}, seed + 2, -2, -0.1),
                 uniform({batch, groups, n, length}, seed + 3, -1, 1),
                 uniform({batch, groups, n, length}, seed + 4, -1, 1),
                 uniform({channels}, seed + 5, -1, 1),
                 uniform({batch, channels, length}, seed + 6, -2, 2),
                 uniform({channels}, seed + 7, -0.5, 0.5)};
}

TEST(SelectiveScan, TwoGroupsEqualPerChannelGroups) {
  Problem p = random_problem(2, 4, 2, 3, 5, 11);
  auto grouped = scan({p.u, p.delta, p.a, p.bm, p.cm, p.dskip, p.z, p.bias});
  auto expanded = scan({p.u, p.delta, p.a, expand_groups(p.bm, 4),
                        expand_groups(p.cm, 4), p.dskip, p.z, p.bias});
  ASSERT_TRUE(grouped.is_ok()) << grouped.status().to_string();
  ASSERT_TRUE(expanded.is_ok()) << expanded.status().to_string();
  expect_close((*grouped)[0], (*expanded)[0], 1e-6, "y");
  expect_close((*grouped)[1], (*expanded)[1], 1e-6, "state");
  // Bm and Cm must agree on G.
  auto mixed = scan({p.u, p.delta, p.a, expand_groups(p.bm, 4), p.cm});
  expect_error(mixed.status(), {"Cm must be (B,G,N,L) = (2,4,3,5)"});
}

TEST(SelectiveScan, WholeEqualsTwoPartsWithState) {
  const int64_t length = 9, cut = 4;
  Problem p = random_problem(2, 4, 2, 3, length, 21);
  auto whole = scan({p.u, p.delta, p.a, p.bm, p.cm, p.dskip, p.z, p.bias});
  ASSERT_TRUE(whole.is_ok());
  auto part = [&](int64_t begin, int64_t end, const Tensor& state) {
    return scan(
        {slice_axis(p.u, 2, begin, end), slice_axis(p.delta, 2, begin, end),
         p.a, slice_axis(p.bm, 3, begin, end), slice_axis(p.cm, 3, begin, end),
         p.dskip, slice_axis(p.z, 2, begin, end), p.bias, state});
  };
  auto first = part(0, cut, Tensor());
  ASSERT_TRUE(first.is_ok());
  auto second = part(cut, length, (*first)[1]);
  ASSERT_TRUE(second.is_ok());
  expect_close((*first)[0], slice_axis((*whole)[0], 2, 0, cut), 1e-6, "y1");
  expect_close((*second)[0], slice_axis((*whole)[0], 2, cut, length), 1e-6,
               "y2");
  expect_close((*second)[1], (*whole)[1], 1e-6, "state");
}

TEST(SelectiveScan, Float16InputsFloat32State) {
  Problem p = random_problem(1, 2, 1, 4, 3, 31);
  Tensor u16 = uniform({1, 2, 3}, 31, -1, 1, DType::kF16);
  auto out = scan({u16, p.delta, p.a, p.bm, p.cm});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].dtype(), DType::kF16);
  EXPECT_EQ((*out)[1].dtype(), DType::kF32);
}

TEST(SelectiveScan, Errors) {
  Problem p = random_problem(1, 4, 2, 3, 5, 41);
  Tensor bad_a = uniform({4, 2}, 1, -1, 0);
  expect_error(
      scan({p.u, p.delta, bad_a, p.bm, p.cm}).status(),
      {"[SelectiveScan] node 'test'", "A must be (D,N) = (4,3)", "got (4,2)"});
  expect_error(
      scan({p.u, slice_axis(p.delta, 2, 0, 4), p.a, p.bm, p.cm}).status(),
      {"delta must be (B,D,L) = (1,4,5), got (1,4,4)"});
  Tensor three_groups = uniform({1, 3, 3, 5}, 2, -1, 1);
  expect_error(scan({p.u, p.delta, p.a, three_groups, three_groups}).status(),
               {"D = 4 must be a multiple of G = 3"});
  expect_error(scan({p.u, p.delta, p.a, p.bm, p.cm, Tensor(), Tensor(),
                     Tensor(), uniform({1, 4, 2}, 3, 0, 1)})
                   .status(),
               {"past_state must be (B,D,N) = (1,4,3), got (1,4,2)"});
  expect_error(scan({p.u, p.delta, p.a, p.bm, p.cm,
                     Tensor::from_vector<int32_t>({4}, {1, 1, 1, 1})})
                   .status(),
               {"input 'Dskip' must be", "got i32"});
  expect_error(scan({p.u, p.delta, uniform({4}, 1, 0, 1), p.bm, p.cm}).status(),
               {"A must be (D,N), rank 2, got (4)"});
}

TEST(SelectiveScan, InferenceWithSymbolicDims) {
  Shape bdl{sym("batch"), 8, sym("seq")};
  Shape bgnl{sym("batch"), 2, 16, sym("seq")};
  auto out =
      scan_testing::infer(kSeqrtDomain, "SelectiveScan",
                          {info(DType::kBF16, bdl), info(DType::kBF16, bdl),
                           info(DType::kF32, Shape{8, 16}),
                           info(DType::kBF16, bgnl), info(DType::kBF16, bgnl)});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].dtype, DType::kBF16);
  EXPECT_EQ(*(*out)[0].shape, bdl);
  EXPECT_EQ((*out)[1].dtype, DType::kF32);
  EXPECT_EQ(*(*out)[1].shape, (Shape{sym("batch"), 8, 16}));
  // A symbolic u takes its sizes from A.
  Shape open{sym("batch"), Dim::unknown(), sym("seq")};
  auto from_a =
      scan_testing::infer(kSeqrtDomain, "SelectiveScan",
                          {info(DType::kF32, open), info(DType::kF32, open),
                           info(DType::kF32, Shape{8, 16}),
                           info(DType::kF32, bgnl), info(DType::kF32, bgnl)});
  ASSERT_TRUE(from_a.is_ok()) << from_a.status().to_string();
  EXPECT_EQ(*(*from_a)[0].shape, bdl);
  expect_error(
      scan_testing::infer(kSeqrtDomain, "SelectiveScan",
                          {info(DType::kF32, bdl), info(DType::kF32, bdl),
                           info(DType::kF32, Shape{8, 4}),
                           info(DType::kF32, bgnl), info(DType::kF32, bgnl)})
          .status(),
      {"A must be (D,N) = (8,16), got (8,4)"});
}

// The contract's check works on dims alone, as the Vulkan recorder and the
// CUDA planner call it: sizes by name, errors naming the node.
TEST(SelectiveScan, ContractChecksDimsWithoutTensors) {
  Node node;
  node.op = "SelectiveScan";
  node.domain = kSeqrtDomain;
  node.name = "scan";
  using In = SelectiveScanInput;
  std::vector<std::vector<int64_t>> dims = {
      {1, 4, 5}, {1, 4, 5}, {4, 3}, {1, 2, 3, 5}, {1, 2, 3, 5}};
  std::vector<DType> dtypes(dims.size(), DType::kF32);
  auto s =
      check_selective_scan(node, dims_input_types(dims, dtypes, In::kCount));
  ASSERT_TRUE(s.is_ok()) << s.status().to_string();
  EXPECT_EQ(s->batch, 1);
  EXPECT_EQ(s->channels, 4);
  EXPECT_EQ(s->length, 5);
  EXPECT_EQ(s->state, 3);
  EXPECT_EQ(s->groups, 2);

  dims[In::kA] = {4, 2};
  EXPECT_EQ(
      check_selective_scan(node, dims_input_types(dims, dtypes, In::kCount))
          .status()
          .message(),
      "[SelectiveScan] node 'scan': A must be (D,N) = (4,3), got (4,2)");
  dims[In::kA] = {4, 3};
  dtypes[In::kCm] = DType::kUndefined;
  expect_error(
      check_selective_scan(node, dims_input_types(dims, dtypes, In::kCount))
          .status(),
      {"[SelectiveScan] node 'scan'", "input 'Cm' is required"});
  dtypes[In::kCm] = DType::kI32;
  expect_error(
      check_selective_scan(node, dims_input_types(dims, dtypes, In::kCount))
          .status(),
      {"input 'Cm' must be"});
}

TEST(SelectiveScan, AttrsFallBackToTheSchemaDefault) {
  Node node;
  node.op = "SelectiveScan";
  EXPECT_EQ(SelectiveScanAttrs::from(node).delta_softplus,
            SelectiveScanAttrs::kDeltaSoftplusDefault != 0);
  node.attrs["delta_softplus"] = Attribute(int64_t{0});
  EXPECT_FALSE(SelectiveScanAttrs::from(node).delta_softplus);
}

}  // namespace
}  // namespace seqrt
