#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ops/op_test_util.h"

namespace seqrt {
namespace {

using op_testing::expect_error;
using op_testing::expect_values;
using op_testing::f32;
using op_testing::infer_types;
using op_testing::info;
using op_testing::ints;
using op_testing::run_op;
using op_testing::sym;
using op_testing::values_of;

constexpr float kInf = std::numeric_limits<float>::infinity();

// Deterministic values in [-1, 1).
Tensor noise(std::vector<int64_t> dims, uint32_t seed) {
  Tensor t = Tensor::allocate(DType::kF32, std::move(dims)).value();
  uint32_t state = seed * 2654435761u + 12345u;
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    state = state * 1664525u + 1013904223u;
    t.set_element_f64(i, (state >> 8) / double(1 << 24) * 2.0 - 1.0);
  }
  return t;
}

// (B,H,T,w) -> (B,T,H*w).
Tensor pack(const Tensor& x) {
  int64_t b = x.dim(0), h = x.dim(1), t = x.dim(2), w = x.dim(3);
  Tensor out = Tensor::allocate(x.dtype(), {b, t, h * w}).value();
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    int64_t c = i % w, r = i / w;
    int64_t ti = r % t, hi = (r / t) % h, bi = r / (t * h);
    out.set_element_f64((bi * t + ti) * h * w + hi * w + c, x.element_f64(i));
  }
  return out;
}

// Rows [from, to) of the time axis of (B,H,T,w).
Tensor time_slice(const Tensor& x, int64_t from, int64_t to) {
  int64_t b = x.dim(0), h = x.dim(1), t = x.dim(2), w = x.dim(3);
  Tensor out = Tensor::allocate(x.dtype(), {b, h, to - from, w}).value();
  int64_t e = 0;
  for (int64_t r = 0; r < b * h; ++r) {
    for (int64_t ti = from; ti < to; ++ti) {
      for (int64_t c = 0; c < w; ++c) {
        out.set_element_f64(e++, x.element_f64((r * t + ti) * w + c));
      }
    }
  }
  return out;
}

std::vector<Tensor> attend(const std::vector<Tensor>& inputs,
                           const AttrMap& attrs = {}, size_t outputs = 1) {
  Result<std::vector<Tensor>> out = run_op("Attention", inputs, attrs, outputs);
  EXPECT_TRUE(out.is_ok()) << out.status().to_string();
  return out.is_ok() ? *out : std::vector<Tensor>(outputs);
}

void expect_close(const Tensor& got, const Tensor& want, double tol = 1e-6) {
  ASSERT_EQ(got.dims(), want.dims());
  expect_values(got, values_of(want), tol);
}

TEST(OnnxAttention, HandComputedSoftmax) {
  // Logits (scale 1) 0 and ln 3: weights 1/4 and 3/4 over values 4 and 8.
  Tensor q = f32({1, 1, 1, 1}, {1});
  Tensor k = f32({1, 1, 2, 1}, {0, static_cast<float>(std::log(3.0))});
  Tensor v = f32({1, 1, 2, 1}, {4, 8});
  Tensor y = attend({q, k, v}, {{"scale", 1.0f}})[0];
  expect_values(y, {7}, 1e-6);
  // Default scale 1/sqrt(d) with d = 4: q.k = 4 -> logit 2 against 0.
  Tensor q4 = f32({1, 1, 1, 4}, {1, 1, 1, 1});
  Tensor k4 = f32({1, 1, 2, 4}, {1, 1, 1, 1, 0, 0, 0, 0});
  double w = std::exp(2.0) / (std::exp(2.0) + 1.0);
  expect_values(attend({q4, k4, v})[0], {4 * w + 8 * (1 - w)}, 1e-6);
}

TEST(OnnxAttention, PackedInputsMatch4D) {
  Tensor q = noise({2, 4, 3, 8}, 1), k = noise({2, 2, 5, 8}, 2);
  Tensor v = noise({2, 2, 5, 6}, 3);
  Tensor y4 = attend({q, k, v})[0];
  Tensor y3 = attend({pack(q), pack(k), pack(v)},
                     {{"q_num_heads", 4}, {"kv_num_heads", 2}})[0];
  ASSERT_EQ(y3.dims(), (std::vector<int64_t>{2, 3, 24}));
  expect_close(y3, pack(y4));
}

TEST(OnnxAttention, GroupedQueriesReadSharedHeads) {
  // Hq = 4 over Hkv = 2 equals MHA with kv heads repeated [0, 0, 1, 1].
  Tensor q = noise({1, 4, 3, 4}, 4), k = noise({1, 2, 3, 4}, 5);
  Tensor v = noise({1, 2, 3, 4}, 6);
  auto repeat = [](const Tensor& x) {
    Tensor out = Tensor::allocate(DType::kF32, {1, 4, 3, 4}).value();
    for (int64_t i = 0; i < out.num_elements(); ++i) {
      int64_t h = (i / 12) % 4;
      out.set_element_f64(i, x.element_f64((h / 2) * 12 + i % 12));
    }
    return out;
  };
  expect_close(attend({q, k, v})[0], attend({q, repeat(k), repeat(v)})[0]);
}

TEST(OnnxAttention, CausalWithoutCacheIsTopLeftAligned) {
  // Tq = 2 < Tk = 3 and no cache: query 0 sees key 0 only (ONNX).
  Tensor q = noise({1, 1, 2, 4}, 7), k = noise({1, 1, 3, 4}, 8);
  Tensor v = f32({1, 1, 3, 1}, {1, 10, 100});
  Tensor y = attend({q, k, v}, {{"is_causal", 1}})[0];
  EXPECT_DOUBLE_EQ(y.element_f64(0), 1.0);
  EXPECT_LT(y.element_f64(1), 10.0 + 1e-6);  // keys 0 and 1 only
}

TEST(OnnxAttention, CacheCarryEqualsWholeSequence) {
  // Causal over 5 steps == 2 steps, then 3 more with past_key/past_value.
  Tensor q = noise({1, 2, 5, 4}, 9), k = noise({1, 2, 5, 4}, 10);
  Tensor v = noise({1, 2, 5, 3}, 11);
  AttrMap causal{{"is_causal", 1}};
  Tensor whole = attend({q, k, v}, causal)[0];
  auto first =
      attend({time_slice(q, 0, 2), time_slice(k, 0, 2), time_slice(v, 0, 2)},
             causal, 3);
  auto second = attend({time_slice(q, 2, 5), time_slice(k, 2, 5),
                        time_slice(v, 2, 5), Tensor(), first[1], first[2]},
                       causal, 3);
  expect_close(first[0], time_slice(whole, 0, 2));
  expect_close(second[0], time_slice(whole, 2, 5));
  expect_close(second[1], k);
  expect_close(second[2], v);
}

TEST(OnnxAttention, FixedCapacityCacheWithNonpadLengths) {
  // A cache of capacity 6 holding 4 valid keys in batch 0 and 6 in batch 1:
  // equal to attention over exactly those keys, bottom-right aligned.
  Tensor q = noise({2, 1, 2, 4}, 12), k = noise({2, 1, 6, 4}, 13);
  Tensor v = noise({2, 1, 6, 2}, 14);
  AttrMap causal{{"is_causal", 1}};
  std::vector<Tensor> in{q, k, v, Tensor(), Tensor(), Tensor(), ints({4, 6})};
  Tensor y = attend(in, causal)[0];
  for (int64_t b = 0; b < 2; ++b) {
    int64_t len = b == 0 ? 4 : 6;
    auto batch = [&](const Tensor& x, int64_t t) {
      Tensor out = Tensor::allocate(DType::kF32, {1, 1, t, x.dim(3)}).value();
      for (int64_t i = 0; i < out.num_elements(); ++i) {
        out.set_element_f64(i, x.element_f64(b * x.dim(2) * x.dim(3) + i));
      }
      return out;
    };
    // Without a cache the alignment is top-left, so give the keys before
    // the 2 queries as past.
    auto want = attend({batch(q, 2), time_slice(batch(k, len), len - 2, len),
                        time_slice(batch(v, len), len - 2, len), Tensor(),
                        time_slice(batch(k, len), 0, len - 2),
                        time_slice(batch(v, len), 0, len - 2)},
                       causal)[0];
    for (int64_t i = 0; i < 4; ++i) {
      EXPECT_NEAR(y.element_f64(b * 4 + i), want.element_f64(i), 1e-6);
    }
  }
}

TEST(OnnxAttention, MasksBoolFloatShortAndFullyMasked) {
  Tensor q = noise({1, 1, 2, 4}, 15), k = noise({1, 1, 3, 4}, 16);
  Tensor v = noise({1, 1, 3, 2}, 17);
  Tensor as_bool = Tensor::from_vector<bool>({2, 3}, {1, 0, 1, 0, 0, 0});
  Tensor as_float = f32({2, 3}, {0, -kInf, 0, -kInf, -kInf, -kInf});
  Tensor yb = attend({q, k, v, as_bool})[0];
  expect_close(yb, attend({q, k, v, as_float})[0]);
  // Row 1 sees no key: zeros, not NaN.
  EXPECT_EQ(yb.element_f64(2), 0.0);
  EXPECT_EQ(yb.element_f64(3), 0.0);
  // A mask shorter than Ttot hides the keys past its end.
  Tensor short_mask = f32({1, 2}, {0, 0});
  Tensor cut = f32({1, 3}, {0, 0, -kInf});
  expect_close(attend({q, k, v, short_mask})[0], attend({q, k, v, cut})[0]);
}

TEST(OnnxAttention, QkMatmulOutputModes) {
  // One query, two keys: products 2 and 0 (scale 1), softcap 1, mask
  // (0, -1).
  Tensor q = f32({1, 1, 1, 1}, {1});
  Tensor k = f32({1, 1, 2, 1}, {2, 0});
  Tensor v = f32({1, 1, 2, 1}, {1, 3});
  Tensor mask = f32({1, 2}, {0, -1});
  double capped = std::tanh(2.0);
  double w0 = std::exp(capped) / (std::exp(capped) + std::exp(-1.0));
  std::vector<std::vector<double>> want = {
      {2, 0}, {capped, 0}, {capped, -1}, {w0, 1 - w0}};
  for (int64_t mode = 0; mode < 4; ++mode) {
    auto out = attend(
        {q, k, v, mask},
        {{"scale", 1.0f}, {"softcap", 1.0f}, {"qk_matmul_output_mode", mode}},
        4);
    SCOPED_TRACE(mode);
    expect_values(out[3], want[static_cast<size_t>(mode)], 1e-6);
    expect_values(out[0], {w0 + 3 * (1 - w0)}, 1e-6);
  }
}

TEST(OnnxAttention, SoftcapComesBeforeTheMask) {
  // A -inf mask entry stays -inf after softcap (no probability leaks).
  Tensor q = f32({1, 1, 1, 1}, {1});
  Tensor k = f32({1, 1, 2, 1}, {50, 0});
  Tensor v = f32({1, 1, 2, 1}, {100, 1});
  Tensor mask = f32({1, 2}, {-kInf, 0});
  Tensor y = attend({q, k, v, mask}, {{"softcap", 0.5f}})[0];
  expect_values(y, {1}, 1e-9);
}

TEST(OnnxAttention, Errors) {
  Tensor q = noise({1, 2, 2, 4}, 18), k = noise({1, 2, 3, 4}, 19);
  Tensor v = noise({1, 2, 3, 4}, 20);
  expect_error(run_op("Attention", {pack(q), pack(k), pack(v)}).status(),
               {"[Attention] node 'test'", "q_num_heads and kv_num_heads"});
  expect_error(
      run_op("Attention", {q, noise({1, 3, 3, 4}, 1), noise({1, 3, 3, 4}, 2)})
          .status(),
      {"Hq = 2 must be a multiple of kv heads Hkv = 3"});
  expect_error(run_op("Attention", {q, k, noise({1, 2, 4, 4}, 3)}).status(),
               {"new key length Tk mismatch"});
  expect_error(
      run_op("Attention", {q, k, v, f32({2, 4}, std::vector<float>(8))})
          .status(),
      {"attn_mask covers 4 keys, more than Ttot = 3"});
  expect_error(
      run_op("Attention", {q, k, v, f32({3, 3}, std::vector<float>(9))})
          .status(),
      {"does not broadcast"});
  expect_error(
      run_op("Attention", {q, k, v, Tensor(), Tensor(), Tensor(), ints({4})})
          .status(),
      {"nonpad_kv_seqlen[0] = 4 is outside [0, Ttot = 3]"});
  expect_error(
      run_op("Attention", {q, k, v, Tensor(), k, v, ints({3})}).status(),
      {"cannot be combined with past_key"});
  expect_error(run_op("Attention", {q, k, v, Tensor(), k}).status(),
               {"past_key and past_value must be given together"});
  expect_error(
      run_op("Attention", {q, k, v}, {{"qk_matmul_output_mode", 4}}).status(),
      {"qk_matmul_output_mode must be 0, 1, 2 or 3"});
  expect_error(run_op("Attention", {q, k, v}, {{"softcap", -1.0f}}).status(),
               {"softcap must be"});
  expect_error(
      run_op("Attention", {q, k, v}, {{"softmax_precision", 7}}).status(),
      {"softmax_precision"});
  expect_error(
      run_op("Attention",
             {q, Tensor::allocate(DType::kF64, {1, 2, 3, 4}).value(), v})
          .status(),
      {"input 'K'"});
  expect_error(run_op("Attention", {pack(q), pack(k), pack(v)},
                      {{"q_num_heads", 3}, {"kv_num_heads", 2}})
                   .status(),
               {"Q hidden size 8 is not a multiple of its 3 heads"});
}

TEST(OnnxAttention, InferenceWithSymbolicDims) {
  Shape q{sym("B"), 8, sym("T"), 64};
  Shape k{sym("B"), 2, sym("T"), 64};
  Shape v{sym("B"), 2, sym("T"), 32};
  auto out = infer_types(
      "Attention",
      {info(DType::kF16, q), info(DType::kF16, k), info(DType::kF32, v),
       op_testing::omitted(), info(DType::kF16, Shape{sym("B"), 2, 10, 64}),
       info(DType::kF32, Shape{sym("B"), 2, 10, 32})},
      {}, 4);
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].dtype, DType::kF16);
  EXPECT_EQ((*out)[0].shape, (Shape{sym("B"), 8, sym("T"), 32}));
  EXPECT_EQ((*out)[1].shape, (Shape{sym("B"), 2, Dim::unknown(), 64}));
  EXPECT_EQ((*out)[2].dtype, DType::kF32);
  EXPECT_EQ((*out)[3].shape, (Shape{sym("B"), 8, sym("T"), Dim::unknown()}));

  // 3D: Y is (B, Tq, Hq*dv); without past, Ttot is K's symbolic length.
  auto packed = infer_types("Attention",
                            {info(DType::kF32, Shape{sym("B"), sym("S"), 96}),
                             info(DType::kF32, Shape{sym("B"), sym("L"), 48}),
                             info(DType::kF32, Shape{sym("B"), sym("L"), 24})},
                            {{"q_num_heads", 4}, {"kv_num_heads", 2}}, 3);
  ASSERT_TRUE(packed.is_ok()) << packed.status().to_string();
  EXPECT_EQ((*packed)[0].shape, (Shape{sym("B"), sym("S"), 48}));
  EXPECT_EQ((*packed)[1].shape, (Shape{sym("B"), 2, sym("L"), 24}));

  expect_error(
      infer_types("Attention", {info(DType::kF32, q), info(DType::kF32, k),
                                info(DType::kF32, Shape{sym("B"), 2, 5})})
          .status(),
      {"Q, K and V must all be 3D or all 4D"});
}

}  // namespace
}  // namespace seqrt
