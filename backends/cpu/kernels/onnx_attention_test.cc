// The CPU kernels of ONNX Attention and TensorScatter against their
// reference kernels, over the layouts and masking rules where the ONNX
// semantics differ from the flash core's (3D inputs, top-left causal
// alignment, masks shorter than the keys, fixed-capacity caches).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

#include "backends/cpu/kernel_table.h"
#include "ops/registry.h"

namespace seqrt::cpu {
namespace {

using Fn = std::function<Status(KernelContext&)>;

const OpSchema& schema(const std::string& op) {
  const OpSchema* s = OpRegistry::global().find(kOnnxDomain, op);
  EXPECT_NE(s, nullptr) << op;
  if (s == nullptr) std::abort();
  return *s;
}

Node make_node(const std::string& op, const std::vector<Tensor>& inputs,
               const AttrMap& attrs, size_t num_outputs) {
  Node node;
  node.name = "n";
  node.op = op;
  node.attrs = attrs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    node.inputs.push_back(inputs[i].empty() ? kNoValue
                                            : static_cast<ValueId>(i));
  }
  for (size_t i = 0; i < num_outputs; ++i) {
    node.outputs.push_back(static_cast<ValueId>(inputs.size() + i));
  }
  return node;
}

Result<std::vector<Tensor>> run(const std::string& op, bool cpu,
                                const std::vector<Tensor>& inputs,
                                const AttrMap& attrs, size_t num_outputs) {
  Node node = make_node(op, inputs, attrs, num_outputs);
  SEQRT_RETURN_IF_ERROR(check_node(node, schema(op)));
  std::vector<const Tensor*> args;
  for (const Tensor& t : inputs) args.push_back(t.empty() ? nullptr : &t);
  KernelContext ctx(node, schema(op), args);
  Fn fn = schema(op).reference;
  if (cpu) {
    const CpuKernel* k = kernel_table().find(kOnnxDomain, op);
    EXPECT_NE(k, nullptr) << op;
    if (k == nullptr) return Status(StatusCode::kInternal, "no kernel");
    fn = k->run;
  }
  SEQRT_RETURN_IF_ERROR(fn(ctx));
  return std::move(ctx.outputs());
}

Tensor random(DType dtype, std::vector<int64_t> dims, uint32_t seed,
              double lo = -1.0, double hi = 1.0) {
  Tensor t = Tensor::allocate(dtype, std::move(dims)).value();
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    double x = u(rng);
    if (dtype == DType::kBool) {
      t.set_element_i64(i, x >= (lo + hi) / 2 ? 1 : 0);
    } else {
      t.set_element_f64(i, dtype == DType::kI64 ? std::floor(x) : x);
    }
  }
  return t;
}
Tensor f32(std::vector<int64_t> dims, uint32_t seed) {
  return random(DType::kF32, std::move(dims), seed);
}
Tensor lens(std::vector<int64_t> values) {
  int64_t n = static_cast<int64_t>(values.size());
  return Tensor::from_vector<int64_t>({n}, values);
}

// Every output of the CPU kernel equals the reference's within tol.
void expect_matches_reference(const std::string& op,
                              const std::vector<Tensor>& inputs,
                              const AttrMap& attrs = {}, size_t num_outputs = 1,
                              double tol = 2e-5) {
  auto want = run(op, false, inputs, attrs, num_outputs);
  auto got = run(op, true, inputs, attrs, num_outputs);
  ASSERT_TRUE(want.is_ok()) << want.status().to_string();
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  for (size_t o = 0; o < num_outputs; ++o) {
    const Tensor& g = (*got)[o];
    const Tensor& w = (*want)[o];
    ASSERT_EQ(g.dims(), w.dims()) << "output " << o;
    ASSERT_EQ(g.dtype(), w.dtype()) << "output " << o;
    int failures = 0;
    for (int64_t i = 0; i < w.num_elements() && failures < 5; ++i) {
      double gv = g.element_f64(i), wv = w.element_f64(i);
      if (!std::isfinite(gv) || std::abs(gv - wv) > tol * (1 + std::abs(wv))) {
        ADD_FAILURE() << "output " << o << " element " << i << ": got " << gv
                      << ", want " << wv;
        ++failures;
      }
    }
  }
}

TEST(CpuOnnxAttention, PackedGqaCausalTopLeft) {
  // Tq = 5 < Tk = 9 without a cache: ONNX aligns causal top-left.
  expect_matches_reference(
      "Attention",
      {f32({2, 5, 4 * 16}, 1), f32({2, 9, 2 * 16}, 2), f32({2, 9, 2 * 8}, 3)},
      {{"q_num_heads", 4}, {"kv_num_heads", 2}, {"is_causal", 1}}, 3);
}

TEST(CpuOnnxAttention, PastCacheFloatMaskShorterThanKeys) {
  // Tq = 2 != Tk = 3 with Tp = 7: causal offset Tp, mask covers 9 of 10.
  std::vector<Tensor> in{f32({2, 4, 2, 32}, 4), f32({2, 1, 3, 32}, 5),
                         f32({2, 1, 3, 24}, 6), f32({2, 1, 2, 9}, 7),
                         f32({2, 1, 7, 32}, 8), f32({2, 1, 7, 24}, 9)};
  expect_matches_reference("Attention", in, {{"is_causal", 1}}, 3);
  expect_matches_reference("Attention", in, {{"softcap", 0.7f}}, 3);
}

TEST(CpuOnnxAttention, BoolMasksAndFullyMaskedRows) {
  Tensor mask = random(DType::kBool, {1, 3, 4, 6}, 10);
  for (int64_t j = 0; j < 6; ++j) mask.set_element_i64(6 + j, 0);
  std::vector<Tensor> in{f32({1, 3, 4, 8}, 11), f32({1, 3, 6, 8}, 12),
                         f32({1, 3, 6, 8}, 13), mask};
  expect_matches_reference("Attention", in);
  expect_matches_reference("Attention", in, {{"is_causal", 1}});
  // A bool mask shorter than Ttot.
  in[3] = random(DType::kBool, {4, 5}, 14);
  expect_matches_reference("Attention", in, {{"scale", 0.5f}});
}

TEST(CpuOnnxAttention, FixedCapacityCache) {
  std::vector<Tensor> in{f32({3, 4, 2, 16}, 15),
                         f32({3, 2, 12, 16}, 16),
                         f32({3, 2, 12, 16}, 17),
                         f32({3, 1, 1, 12}, 18),
                         Tensor(),
                         Tensor(),
                         lens({2, 12, 7})};
  expect_matches_reference("Attention", in, {{"is_causal", 1}});
  in[3] = Tensor();
  expect_matches_reference("Attention", in, {{"is_causal", 1}}, 3);
}

TEST(CpuOnnxAttention, DecodeAndHalfPrecision) {
  std::vector<Tensor> dec{f32({1, 8, 1, 64}, 19),  f32({1, 2, 1, 64}, 20),
                          f32({1, 2, 1, 64}, 21),  Tensor(),
                          f32({1, 2, 40, 64}, 22), f32({1, 2, 40, 64}, 23)};
  expect_matches_reference("Attention", dec, {{"is_causal", 1}}, 3);
  std::vector<Tensor> half{random(DType::kF16, {2, 2, 7, 16}, 24),
                           random(DType::kF16, {2, 2, 7, 16}, 25),
                           random(DType::kF16, {2, 2, 7, 16}, 26)};
  expect_matches_reference("Attention", half, {{"is_causal", 1}}, 3, 2e-3);
}

TEST(CpuOnnxAttention, SameErrorsAsReference) {
  std::vector<Tensor> in{f32({1, 3, 2, 8}, 27), f32({1, 2, 2, 8}, 28),
                         f32({1, 2, 2, 8}, 29)};
  auto got = run("Attention", true, in, {}, 1);
  ASSERT_FALSE(got.is_ok());
  EXPECT_NE(got.status().message().find("multiple of kv heads"),
            std::string::npos);
}

// qk_matmul_output at each of its four stages, with a past cache, a short
// float mask, causal masking and softcap; hidden entries are -inf in both.
TEST(CpuOnnxAttention, QkMatmulOutputMatchesReference) {
  std::vector<Tensor> in{f32({2, 4, 3, 16}, 40), f32({2, 2, 3, 16}, 41),
                         f32({2, 2, 3, 8}, 42),  f32({2, 1, 3, 8}, 43),
                         f32({2, 2, 6, 16}, 44), f32({2, 2, 6, 8}, 45)};
  for (int64_t mode = 0; mode < 4; ++mode) {
    SCOPED_TRACE(mode);
    AttrMap attrs{
        {"is_causal", 1}, {"softcap", 0.9f}, {"qk_matmul_output_mode", mode}};
    auto want = run("Attention", false, in, attrs, 4);
    auto got = run("Attention", true, in, attrs, 4);
    ASSERT_TRUE(want.is_ok()) << want.status().to_string();
    ASSERT_TRUE(got.is_ok()) << got.status().to_string();
    const Tensor &g = (*got)[3], &w = (*want)[3];
    ASSERT_EQ(g.dims(), w.dims());
    for (int64_t i = 0; i < w.num_elements(); ++i) {
      double gv = g.element_f64(i), wv = w.element_f64(i);
      if (std::isinf(wv)) {
        ASSERT_EQ(gv, wv) << i;
      } else {
        ASSERT_NEAR(gv, wv, 2e-5 * (1 + std::abs(wv))) << i;
      }
    }
  }
}

TEST(CpuTensorScatter, MatchesReference) {
  expect_matches_reference(
      "TensorScatter",
      {f32({2, 3, 16, 8}, 30), f32({2, 3, 4, 8}, 31), lens({12, 3})});
  expect_matches_reference(
      "TensorScatter",
      {f32({2, 3, 16, 8}, 32), f32({2, 3, 7, 8}, 33), lens({13, 16 * 3 + 2})},
      {{"mode", "circular"}});
  expect_matches_reference("TensorScatter",
                           {random(DType::kBF16, {4, 9, 3}, 34),
                            random(DType::kBF16, {4, 9, 3}, 35)},
                           {{"axis", 1}});
  expect_matches_reference(
      "TensorScatter",
      {random(DType::kI64, {2, 5}, 36, -9, 9),
       random(DType::kI64, {2, 2}, 37, -9, 9), lens({4, 0})},
      {{"axis", -1}, {"mode", "circular"}});
  auto bad = run("TensorScatter", true,
                 {f32({1, 4, 2}, 38), f32({1, 2, 2}, 39), lens({3})},
                 {{"axis", 1}}, 1);
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("exceeds the cache length"),
            std::string::npos);
}

}  // namespace
}  // namespace seqrt::cpu
