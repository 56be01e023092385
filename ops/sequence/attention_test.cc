// seqrt::Attention reference kernel and inference: hand-computed values,
// equivalences that define the attributes (windows and causality equal an
// explicit mask, GQA equals repeated kv heads, nonpad_kv_seqlen equals the
// truncated cache) and the error paths.
#include <cmath>
#include <limits>
#include <random>

#include "ops/op_test_util.h"
#include "ops/sequence/attention.h"

namespace seqrt {
namespace {

using op_testing::expect_error;
using op_testing::expect_values;
using op_testing::f32;
using op_testing::omitted;
using op_testing::sym;
using op_testing::typed;
using op_testing::values_of;

const OpSchema& attention_schema() {
  const OpSchema* schema = OpRegistry::global().find(kSeqrtDomain, "Attention");
  EXPECT_NE(schema, nullptr);
  if (schema == nullptr) std::abort();
  return *schema;
}

Node attention_node(const AttrMap& attrs, const std::vector<bool>& present,
                    size_t num_outputs) {
  Node node = op_testing::make_node("Attention", attrs, present, num_outputs);
  node.domain = kSeqrtDomain;
  return node;
}

Result<std::vector<Tensor>> run(const std::vector<Tensor>& inputs,
                                const AttrMap& attrs = {},
                                size_t num_outputs = 1) {
  std::vector<bool> present;
  std::vector<const Tensor*> args;
  for (const Tensor& t : inputs) {
    present.push_back(!t.empty());
    args.push_back(t.empty() ? nullptr : &t);
  }
  Node node = attention_node(attrs, present, num_outputs);
  SEQRT_RETURN_IF_ERROR(check_node(node, attention_schema()));
  KernelContext ctx(node, attention_schema(), args);
  SEQRT_RETURN_IF_ERROR(attention_schema().reference(ctx));
  return std::move(ctx.outputs());
}

Tensor run_y(const std::vector<Tensor>& inputs, const AttrMap& attrs = {}) {
  Result<std::vector<Tensor>> out = run(inputs, attrs);
  EXPECT_TRUE(out.is_ok()) << out.status().to_string();
  return out.is_ok() ? (*out)[0] : Tensor();
}

Result<std::vector<ValueInfo>> infer(const std::vector<ValueInfo>& inputs,
                                     const AttrMap& attrs = {},
                                     size_t num_outputs = 1) {
  std::vector<bool> present;
  for (const ValueInfo& v : inputs)
    present.push_back(v.dtype != DType::kUndefined);
  Node node = attention_node(attrs, present, num_outputs);
  SEQRT_RETURN_IF_ERROR(check_node(node, attention_schema()));
  InferContext ctx(node, attention_schema(), inputs);
  SEQRT_RETURN_IF_ERROR(attention_schema().infer(ctx));
  return ctx.outputs();
}

Tensor random(std::vector<int64_t> dims, uint32_t seed) {
  Tensor t = Tensor::allocate(DType::kF32, std::move(dims)).value();
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (int64_t i = 0; i < t.num_elements(); ++i) t.set_element_f64(i, u(rng));
  return t;
}

Tensor bool_mask(std::vector<int64_t> dims,
                 const std::function<bool(int64_t, int64_t)>& allow) {
  Tensor t = Tensor::allocate(DType::kBool, dims).value();
  int64_t tq = dims[dims.size() - 2], tk = dims.back();
  for (int64_t e = 0; e < t.num_elements(); ++e) {
    int64_t j = e % tk, i = (e / tk) % tq;
    t.set_element_i64(e, allow(i, j) ? 1 : 0);
  }
  return t;
}

// (b, h, t) slice [t0, t1) of a (B,H,T,w) tensor, batch b only.
Tensor slice(const Tensor& x, int64_t b, int64_t t0, int64_t t1) {
  int64_t h = x.dim(1), w = x.dim(3);
  Tensor out = Tensor::allocate(x.dtype(), {1, h, t1 - t0, w}).value();
  for (int64_t hh = 0; hh < h; ++hh) {
    for (int64_t t = t0; t < t1; ++t) {
      for (int64_t c = 0; c < w; ++c) {
        int64_t src = ((b * h + hh) * x.dim(2) + t) * w + c;
        int64_t dst = (hh * (t1 - t0) + t - t0) * w + c;
        out.set_element_f64(dst, x.element_f64(src));
      }
    }
  }
  return out;
}

void expect_same(const Tensor& a, const Tensor& b, double tol = 1e-6) {
  ASSERT_EQ(a.dims(), b.dims());
  expect_values(a, values_of(b), tol);
}

TEST(SeqrtAttention, HandComputedSoftmax) {
  // logits 0 and ln 3: weights 1/4, 3/4 of values 4 and 8.
  Tensor q = f32({1, 1, 1, 1}, {1.0f});
  Tensor k = f32({1, 1, 2, 1}, {0.0f, std::log(3.0f)});
  Tensor v = f32({1, 1, 2, 1}, {4.0f, 8.0f});
  expect_values(run_y({q, k, v}, {{"scale", 1.0f}}), {7.0}, 1e-6);
  // softcap 1: logits become 0 and tanh(ln 3) = 0.8.
  double w = std::exp(0.8) / (1.0 + std::exp(0.8));
  expect_values(run_y({q, k, v}, {{"scale", 1.0f}, {"softcap", 1.0f}}),
                {4.0 * (1 - w) + 8.0 * w}, 1e-6);
}

TEST(SeqrtAttention, HandComputedSigmoid) {
  Tensor q = f32({1, 1, 1, 1}, {1.0f});
  Tensor k = f32({1, 1, 2, 1}, {0.0f, std::log(3.0f)});
  Tensor v = f32({1, 1, 2, 1}, {4.0f, 8.0f});
  // sigmoid(0) = 1/2, sigmoid(ln 3) = 3/4, not normalised.
  expect_values(run_y({q, k, v}, {{"scale", 1.0f}, {"score", "sigmoid"}}),
                {8.0}, 1e-6);
  // bias -ln 3: sigmoid(-ln 3) = 1/4, sigmoid(0) = 1/2.
  expect_values(run_y({q, k, v}, {{"scale", 1.0f},
                                  {"score", "sigmoid"},
                                  {"sigmoid_bias", -std::log(3.0f)}}),
                {5.0}, 1e-6);
}

TEST(SeqrtAttention, DefaultScaleIsInverseSqrtD) {
  Tensor q = random({1, 2, 3, 4}, 1), k = random({1, 2, 5, 4}, 2),
         v = random({1, 2, 5, 3}, 3);
  expect_same(run_y({q, k, v}), run_y({q, k, v}, {{"scale", 0.5f}}));
}

TEST(SeqrtAttention, FullyMaskedRowsAreZero) {
  Tensor q = random({1, 1, 2, 4}, 1), k = random({1, 1, 3, 4}, 2),
         v = random({1, 1, 3, 2}, 3);
  Tensor mask = bool_mask({2, 3}, [](int64_t i, int64_t) { return i == 1; });
  for (const char* score : {"softmax", "sigmoid"}) {
    Tensor y = run_y({q, k, v, mask}, {{"score", score}});
    EXPECT_EQ(y.element_f64(0), 0.0);
    EXPECT_EQ(y.element_f64(1), 0.0);
    EXPECT_NE(y.element_f64(2), 0.0);
  }
  const float inf = std::numeric_limits<float>::infinity();
  Tensor fmask = f32({2, 3}, {-inf, -inf, -inf, 0, 0, 0});
  Tensor y = run_y({q, k, v, fmask});
  expect_values(y, {0.0, 0.0, y.element_f64(2), y.element_f64(3)});
  EXPECT_TRUE(std::isfinite(y.element_f64(2)));
}

TEST(SeqrtAttention, HugeLogitsDoNotOverflow) {
  // Logits 1e4 and 1e4 - 10: weights 1/(1+e^-10) and e^-10/(1+e^-10).
  Tensor q = f32({1, 1, 1, 1}, {100.0f});
  Tensor k = f32({1, 1, 2, 1}, {100.0f, 99.9f});
  Tensor v = f32({1, 1, 2, 1}, {1.0f, 2.0f});
  double w = 1.0 / (1.0 + std::exp(-10.0));
  expect_values(run_y({q, k, v}, {{"scale", 1.0f}}), {w + 2.0 * (1 - w)}, 1e-5);
  expect_values(run_y({q, k, v}, {{"scale", 1.0f}, {"score", "sigmoid"}}),
                {3.0}, 1e-6);
}

TEST(SeqrtAttention, GqaEqualsRepeatedKvHeads) {
  Tensor q = random({2, 4, 3, 4}, 1), k = random({2, 2, 5, 4}, 2),
         v = random({2, 2, 5, 3}, 3);
  Tensor k4 = Tensor::allocate(DType::kF32, {2, 4, 5, 4}).value();
  Tensor v4 = Tensor::allocate(DType::kF32, {2, 4, 5, 3}).value();
  for (auto [src, dst] : {std::pair{&k, &k4}, std::pair{&v, &v4}}) {
    int64_t per_head = src->dim(2) * src->dim(3);
    for (int64_t e = 0; e < dst->num_elements(); ++e) {
      int64_t bh = e / per_head, b = bh / 4, h = bh % 4;
      int64_t from = (b * 2 + h / 2) * per_head + e % per_head;
      dst->set_element_f64(e, src->element_f64(from));
    }
  }
  expect_same(run_y({q, k, v}, {{"is_causal", 1}}),
              run_y({q, k4, v4}, {{"is_causal", 1}}));
}

TEST(SeqrtAttention, CausalWindowEqualsExplicitMaskWithPast) {
  // Tq = 3 after Tp = 4 past keys and Tk = 3 new: positions 4, 5, 6.
  Tensor q = random({1, 2, 3, 4}, 1), k = random({1, 2, 3, 4}, 2),
         v = random({1, 2, 3, 2}, 3), pk = random({1, 2, 4, 4}, 4),
         pv = random({1, 2, 4, 2}, 5);
  for (int64_t left : {-1, 0, 2}) {
    for (int64_t right : {-1, 0, 1}) {
      for (int64_t causal : {0, 1}) {
        Tensor mask = bool_mask({3, 7}, [&](int64_t i, int64_t j) {
          int64_t p = 4 + i;
          return (!causal || j <= p) && (left < 0 || p - j <= left) &&
                 (right < 0 || j - p <= right);
        });
        AttrMap attrs{{"is_causal", causal},
                      {"window_left", left},
                      {"window_right", right}};
        expect_same(run_y({q, k, v, Tensor(), pk, pv}, attrs),
                    run_y({q, k, v, mask, pk, pv}));
      }
    }
  }
}

TEST(SeqrtAttention, PresentIsConcatOfPastAndNew) {
  Tensor q = random({1, 1, 2, 3}, 1), k = random({1, 1, 2, 3}, 2),
         v = random({1, 1, 2, 5}, 3), pk = random({1, 1, 4, 3}, 4),
         pv = random({1, 1, 4, 5}, 5);
  Result<std::vector<Tensor>> out = run({q, k, v, Tensor(), pk, pv}, {}, 3);
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ((*out)[1].dims(), (std::vector<int64_t>{1, 1, 6, 3}));
  std::vector<double> want = values_of(pk);
  for (double x : values_of(k)) want.push_back(x);
  expect_values((*out)[1], want, 0.0);
  want = values_of(pv);
  for (double x : values_of(v)) want.push_back(x);
  expect_values((*out)[2], want, 0.0);
}

TEST(SeqrtAttention, NonpadKvSeqlenEqualsTruncatedCache) {
  // A cache of capacity 7 (3 past + 4 new) whose valid lengths are 5 and 2.
  Tensor q = random({2, 2, 2, 4}, 1), k = random({2, 2, 4, 4}, 2),
         v = random({2, 2, 4, 3}, 3), pk = random({2, 2, 3, 4}, 4),
         pv = random({2, 2, 3, 3}, 5);
  Tensor lens = op_testing::ints({5, 2});
  for (int64_t causal : {0, 1}) {
    AttrMap attrs{{"is_causal", causal}, {"window_left", 3}};
    Result<std::vector<Tensor>> full =
        run({q, k, v, Tensor(), pk, pv, lens}, attrs, 3);
    ASSERT_TRUE(full.is_ok()) << full.status().to_string();
    Tensor present_k = (*full)[1], present_v = (*full)[2];
    for (int64_t b = 0; b < 2; ++b) {
      int64_t len = b == 0 ? 5 : 2;
      Tensor want = run_y({slice(q, b, 0, 2), slice(present_k, b, 0, len),
                           slice(present_v, b, 0, len)},
                          attrs);
      expect_same(slice((*full)[0], b, 0, 2), want);
    }
  }
}

TEST(SeqrtAttention, InfersSymbolicShapes) {
  auto out =
      infer({typed(DType::kF16, Shape{sym("B"), 8, sym("T"), 64}),
             typed(DType::kF16, Shape{sym("B"), 2, sym("T"), 64}),
             typed(DType::kF16, Shape{sym("B"), 2, sym("T"), 32}), omitted(),
             typed(DType::kF16, Shape{sym("B"), 2, sym("P"), 64}),
             typed(DType::kF16, Shape{sym("B"), 2, sym("P"), 32})},
            {}, 3);
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].dtype, DType::kF16);
  EXPECT_EQ(*(*out)[0].shape, (Shape{sym("B"), 8, sym("T"), 32}));
  EXPECT_EQ(*(*out)[1].shape, (Shape{sym("B"), 2, Dim(), 64}));
  EXPECT_EQ(*(*out)[2].shape, (Shape{sym("B"), 2, Dim(), 32}));
  auto fixed = infer({typed(DType::kF32, Shape{1, 4, 1, 8}),
                      typed(DType::kF32, Shape{1, 1, 1, 8}),
                      typed(DType::kF32, Shape{1, 1, 1, 8}), omitted(),
                      typed(DType::kF32, Shape{1, 1, 9, 8}),
                      typed(DType::kF32, Shape{1, 1, 9, 8})},
                     {}, 2);
  ASSERT_TRUE(fixed.is_ok()) << fixed.status().to_string();
  EXPECT_EQ(*(*fixed)[1].shape, (Shape{1, 1, 10, 8}));
}

TEST(SeqrtAttention, RejectsBadInputs) {
  Tensor q = random({1, 4, 2, 8}, 1), k = random({1, 2, 3, 8}, 2),
         v = random({1, 2, 3, 4}, 3);
  expect_error(
      run({q, random({1, 3, 3, 8}, 2), random({1, 3, 3, 4}, 3)}).status(),
      {"[Attention]", "Hq = 4", "Hkv = 3"});
  expect_error(run({q, random({1, 2, 3, 6}, 2), v}).status(),
               {"head size d mismatch", "Q has 8", "K has 6"});
  expect_error(run({q, k, random({1, 2, 4, 4}, 3)}).status(),
               {"new key length Tk mismatch"});
  expect_error(run({random({4, 2, 8}, 1), k, v}).status(),
               {"Q must be (B,Hq,Tq,d)"});
  expect_error(run({q, k, v, random({2, 4}, 4)}).status(),
               {"attn_mask (2,4) is not broadcastable", "(1,4,2,3)"});
  expect_error(run({q, k, v, op_testing::ints({1, 1, 1})}).status(),
               {"attn_mask"});
  expect_error(run({q, k, v, Tensor(), random({1, 2, 5, 8}, 4)}).status(),
               {"past_key and past_value must be given together"});
  expect_error(
      run({q, k, v, Tensor(), Tensor(), Tensor(), op_testing::ints({4})})
          .status(),
      {"nonpad_kv_seqlen[0] = 4", "[0, Ttot = 3]"});
  expect_error(
      run({q, k, v, Tensor(), Tensor(), Tensor(), op_testing::ints({1, 2})})
          .status(),
      {"batch size B mismatch"});
  expect_error(run({q, k, v}, {{"softcap", -1.0f}}).status(), {"softcap"});
  expect_error(run({q, k, v}, {{"sigmoid_bias", 1.0f}}).status(),
               {"only used with score = 'sigmoid'"});
  expect_error(run({q, k, v}, {{"window_left", -2}}).status(), {"window_left"});
  EXPECT_FALSE(run({q, k, v}, {{"score", "relu"}}).is_ok());
  Tensor half_k = Tensor::allocate(DType::kF16, {1, 2, 3, 8}).value();
  expect_error(run({q, half_k, v}).status(), {"input 'K'"});
  expect_error(infer({typed(DType::kF32, Shape{1, 4, sym("T"), 8}),
                      typed(DType::kF32, Shape{1, 2, 3, 16}),
                      typed(DType::kF32, Shape{1, 2, 3, 8})})
                   .status(),
               {"head size d mismatch"});
}

}  // namespace
}  // namespace seqrt
