// The CPU flash-attention kernel of seqrt::Attention against the reference
// kernel, and the cache identities: decode = the last row of a prefill,
// prefill + N steps with the present carried = one prefill, chunked prefill.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

#include "backends/cpu/kernel_table.h"
#include "backends/cpu/kernels/attention_kernel.h"
#include "backends/cpu/parallel.h"
#include "ops/registry.h"
#include "ops/sequence/attention.h"

namespace seqrt::cpu {
namespace {

const OpSchema& schema() {
  const OpSchema* s = OpRegistry::global().find(kSeqrtDomain, "Attention");
  EXPECT_NE(s, nullptr);
  if (s == nullptr) std::abort();
  return *s;
}

using Fn = std::function<Status(KernelContext&)>;

Fn cpu_kernel() {
  const CpuKernel* k = kernel_table().find(kSeqrtDomain, "Attention");
  EXPECT_NE(k, nullptr);
  return k != nullptr ? k->run : Fn();
}

std::vector<Tensor> run(const Fn& fn, const std::vector<Tensor>& inputs,
                        const AttrMap& attrs = {}, size_t num_outputs = 1) {
  Node node;
  node.name = "attn";
  node.op = "Attention";
  node.domain = kSeqrtDomain;
  node.attrs = attrs;
  std::vector<const Tensor*> args;
  for (size_t i = 0; i < inputs.size(); ++i) {
    node.inputs.push_back(inputs[i].empty() ? kNoValue
                                            : static_cast<ValueId>(i));
    args.push_back(inputs[i].empty() ? nullptr : &inputs[i]);
  }
  for (size_t i = 0; i < num_outputs; ++i) {
    node.outputs.push_back(static_cast<ValueId>(inputs.size() + i));
  }
  EXPECT_TRUE(check_node(node, schema()).is_ok());
  KernelContext ctx(node, schema(), args);
  Status status = fn(ctx);
  EXPECT_TRUE(status.is_ok()) << status.to_string();
  return ctx.outputs();
}

Tensor random(std::vector<int64_t> dims, uint32_t seed, double lo = -1.0,
              double hi = 1.0, DType dtype = DType::kF32) {
  Tensor t = Tensor::allocate(dtype, std::move(dims)).value();
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    double x = u(rng);
    if (dtype == DType::kBool) {
      t.set_element_i64(i, x >= (lo + hi) / 2 ? 1 : 0);
    } else {
      t.set_element_f64(i, x);
    }
  }
  return t;
}

// Elements must agree within tol (absolute + relative) and be finite.
void expect_close(const Tensor& got, const Tensor& want, double tol = 2e-5) {
  ASSERT_EQ(got.dims(), want.dims());
  ASSERT_EQ(got.dtype(), want.dtype());
  int failures = 0;
  for (int64_t i = 0; i < want.num_elements() && failures < 5; ++i) {
    double g = got.element_f64(i), w = want.element_f64(i);
    if (!std::isfinite(g) || std::abs(g - w) > tol * (1.0 + std::abs(w))) {
      ADD_FAILURE() << "element " << i << ": got " << g << ", want " << w;
      ++failures;
    }
  }
}

// The reference and CPU outputs of one call agree, all outputs.
void expect_matches_reference(const std::vector<Tensor>& inputs,
                              const AttrMap& attrs, size_t num_outputs = 1,
                              double tol = 2e-5) {
  std::vector<Tensor> want =
      run(schema().reference, inputs, attrs, num_outputs);
  std::vector<Tensor> got = run(cpu_kernel(), inputs, attrs, num_outputs);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) expect_close(got[i], want[i], tol);
}

// Rows [t0, t1) of the time axis of a (B,H,T,w) tensor.
Tensor time_slice(const Tensor& x, int64_t t0, int64_t t1) {
  int64_t bh = x.dim(0) * x.dim(1), t = x.dim(2), w = x.dim(3);
  Tensor out =
      Tensor::allocate(x.dtype(), {x.dim(0), x.dim(1), t1 - t0, w}).value();
  for (int64_t r = 0; r < bh; ++r) {
    for (int64_t s = t0; s < t1; ++s) {
      for (int64_t c = 0; c < w; ++c) {
        out.set_element_f64((r * (t1 - t0) + s - t0) * w + c,
                            x.element_f64((r * t + s) * w + c));
      }
    }
  }
  return out;
}

struct Config {
  int64_t b, hq, hkv, tq, tp, tk, d, dv;
  AttrMap attrs;
};

void check_config(const Config& c, uint32_t seed) {
  SCOPED_TRACE(::testing::Message()
               << "B=" << c.b << " Hq=" << c.hq << " Hkv=" << c.hkv << " Tq="
               << c.tq << " Tp=" << c.tp << " Tk=" << c.tk << " d=" << c.d);
  std::vector<Tensor> in = {random({c.b, c.hq, c.tq, c.d}, seed),
                            random({c.b, c.hkv, c.tk, c.d}, seed + 1),
                            random({c.b, c.hkv, c.tk, c.dv}, seed + 2)};
  if (c.tp > 0) {
    in.push_back(Tensor());
    in.push_back(random({c.b, c.hkv, c.tp, c.d}, seed + 3));
    in.push_back(random({c.b, c.hkv, c.tp, c.dv}, seed + 4));
  }
  expect_matches_reference(in, c.attrs, 3);
}

TEST(CpuAttention, PrefillMatchesReference) {
  AttrMap causal{{"is_causal", 1}};
  check_config({1, 1, 1, 1, 0, 1, 32, 32, {}}, 1);
  check_config({2, 4, 4, 17, 0, 17, 32, 32, causal}, 2);
  check_config({1, 4, 1, 130, 0, 130, 80, 48, causal}, 3);
  check_config({1, 8, 2, 100, 0, 100, 64, 64, {}}, 4);
  check_config(
      {1, 2, 2, 70, 0, 70, 16, 16, {{"window_left", 5}, {"window_right", 3}}},
      5);
  check_config(
      {1, 2, 1, 129, 0, 129, 32, 32, {{"is_causal", 1}, {"window_left", 0}}},
      6);
  check_config({1,
                2,
                2,
                65,
                0,
                65,
                32,
                32,
                {{"is_causal", 1}, {"softcap", 0.5f}, {"scale", 3.0f}}},
               7);
}

TEST(CpuAttention, SigmoidMatchesReference) {
  for (float bias : {0.0f, -std::log(90.0f)}) {
    check_config(
        {1,
         4,
         2,
         90,
         0,
         90,
         32,
         32,
         {{"score", "sigmoid"}, {"sigmoid_bias", bias}, {"is_causal", 1}}},
        11);
    check_config({1,
                  2,
                  2,
                  1,
                  700,
                  1,
                  32,
                  32,
                  {{"score", "sigmoid"}, {"sigmoid_bias", bias}}},
                 12);
  }
}

TEST(CpuAttention, MasksMatchReference) {
  Tensor q = random({2, 4, 33, 16}, 1), k = random({2, 2, 70, 16}, 2),
         v = random({2, 2, 70, 8}, 3);
  Tensor bool_mask = random({2, 1, 33, 70}, 4, 0.0, 1.0, DType::kBool);
  expect_matches_reference({q, k, v, bool_mask}, {{"is_causal", 1}});
  Tensor float_mask = random({4, 1, 70}, 5, -3.0, 1.0);
  expect_matches_reference({q, k, v, float_mask}, {});
  // Row 3 of every head and batch sees nothing: 0, not NaN.
  Tensor rows = random({33, 1}, 6, 0.0, 1.0);
  for (int64_t i = 0; i < 33; ++i) {
    rows.set_element_f64(i, i == 3 ? -INFINITY : 0.0);
  }
  expect_matches_reference({q, k, v, rows}, {});
  std::vector<Tensor> y = run(cpu_kernel(), {q, k, v, rows}, {});
  EXPECT_EQ(y[0].element_f64(3 * 8), 0.0);
}

TEST(CpuAttention, HugeLogitsStayFinite) {
  Tensor q = random({1, 2, 40, 32}, 1, 17.0, 18.0);
  Tensor k = random({1, 2, 40, 32}, 2, 17.0, 18.0);
  Tensor v = random({1, 2, 40, 32}, 3);
  // q.k ~ 1e4 with scale 1.
  expect_matches_reference({q, k, v}, {{"scale", 1.0f}, {"is_causal", 1}}, 1,
                           1e-3);
  expect_matches_reference({q, k, v}, {{"scale", 1.0f}, {"score", "sigmoid"}},
                           1, 1e-3);
}

TEST(CpuAttention, DecodeIsLastRowOfPrefill) {
  const int64_t t = 300;
  Tensor q = random({1, 8, t, 64}, 1), k = random({1, 2, t, 64}, 2),
         v = random({1, 2, t, 64}, 3);
  AttrMap attrs{{"is_causal", 1}};
  Tensor full = run(cpu_kernel(), {q, k, v}, attrs)[0];
  Tensor step = run(cpu_kernel(), {time_slice(q, t - 1, t), k, v}, attrs)[0];
  expect_close(step, time_slice(full, t - 1, t), 1e-5);
}

TEST(CpuAttention, PrefillThenStepsEqualsWholeSequence) {
  const int64_t t = 70, n = 5;
  Tensor q = random({2, 4, t + n, 32}, 1), k = random({2, 2, t + n, 32}, 2),
         v = random({2, 2, t + n, 24}, 3);
  AttrMap attrs{{"is_causal", 1}, {"window_left", 40}};
  Tensor whole = run(cpu_kernel(), {q, k, v}, attrs)[0];
  std::vector<Tensor> out =
      run(cpu_kernel(),
          {time_slice(q, 0, t), time_slice(k, 0, t), time_slice(v, 0, t)},
          attrs, 3);
  expect_close(out[0], time_slice(whole, 0, t), 1e-5);
  for (int64_t s = t; s < t + n; ++s) {
    Tensor past_k = out[1], past_v = out[2];
    out = run(cpu_kernel(),
              {time_slice(q, s, s + 1), time_slice(k, s, s + 1),
               time_slice(v, s, s + 1), Tensor(), past_k, past_v},
              attrs, 3);
    expect_close(out[0], time_slice(whole, s, s + 1), 1e-5);
  }
  expect_close(out[1], k, 0.0);
  expect_close(out[2], v, 0.0);
}

TEST(CpuAttention, ChunkedPrefillEqualsWholeSequence) {
  const int64_t t = 80, chunk = 16;
  Tensor q = random({1, 2, t, 32}, 1), k = random({1, 2, t, 32}, 2),
         v = random({1, 2, t, 32}, 3);
  AttrMap attrs{{"is_causal", 1}};
  Tensor whole = run(cpu_kernel(), {q, k, v}, attrs)[0];
  Tensor past_k, past_v;
  for (int64_t s = 0; s < t; s += chunk) {
    std::vector<Tensor> out =
        run(cpu_kernel(),
            {time_slice(q, s, s + chunk), time_slice(k, s, s + chunk),
             time_slice(v, s, s + chunk), Tensor(), past_k, past_v},
            attrs, 3);
    expect_close(out[0], time_slice(whole, s, s + chunk), 1e-5);
    past_k = out[1];
    past_v = out[2];
  }
}

// One kv head and a long cache: the key range is split across threads and
// merged by log-sum-exp.
TEST(CpuAttention, SplitKeyDecodeMatchesReference) {
  set_threads_for_this_thread(4);
  check_config({1, 4, 1, 1, 2000, 1, 64, 64, {{"is_causal", 1}}}, 21);
  check_config(
      {1, 1, 1, 3, 1500, 3, 32, 32, {{"is_causal", 1}, {"window_left", 700}}},
      22);
  check_config({1, 2, 2, 1, 1200, 1, 32, 32, {{"score", "sigmoid"}}}, 23);
  set_threads_for_this_thread(0);
}

TEST(CpuAttention, NonpadKvSeqlenMatchesReference) {
  set_threads_for_this_thread(4);
  // Capacity 1100; the tail past each length is garbage that must not leak.
  Tensor q = random({2, 4, 1, 32}, 1), k = random({2, 1, 1100, 32}, 2, -50, 50),
         v = random({2, 1, 1100, 32}, 3, -50, 50);
  Tensor lens = Tensor::from_vector<int64_t>({2}, {900, 7});
  expect_matches_reference({q, k, v, Tensor(), Tensor(), Tensor(), lens},
                           {{"is_causal", 1}}, 3, 1e-4);
  Tensor q16 = random({2, 4, 16, 32}, 4);
  expect_matches_reference({q16, k, v, Tensor(), Tensor(), Tensor(), lens},
                           {{"is_causal", 1}, {"window_left", 100}}, 1, 1e-4);
  set_threads_for_this_thread(0);
}

TEST(CpuAttention, HalfPrecisionInputs) {
  for (DType dtype : {DType::kF16, DType::kBF16}) {
    Tensor q = random({1, 2, 20, 32}, 1, -1, 1, dtype);
    Tensor k = random({1, 2, 20, 32}, 2, -1, 1, dtype);
    Tensor v = random({1, 2, 20, 32}, 3, -1, 1, dtype);
    expect_matches_reference({q, k, v}, {{"is_causal", 1}}, 3, 1e-2);
  }
}

// The core's q_position0 (ONNX's top-left causal alignment) equals the
// reference with the matching explicit mask.
TEST(CpuAttention, CoreTopLeftCausalEqualsExplicitMask) {
  const int64_t tq = 70, tk = 130, d = 16;
  Tensor q = random({1, 2, tq, d}, 1), k = random({1, 1, tk, d}, 2),
         v = random({1, 1, tk, d}, 3);
  Tensor mask = Tensor::allocate(DType::kBool, {tq, tk}).value();
  for (int64_t i = 0; i < tq; ++i) {
    for (int64_t j = 0; j < tk; ++j) mask.set_element_i64(i * tk + j, j <= i);
  }
  Tensor want = run(schema().reference, {q, k, v, mask})[0];
  Tensor y = Tensor::allocate(DType::kF32, {1, 2, tq, d}).value();
  AttentionArgs a;
  a.batch = 1;
  a.q_heads = 2;
  a.kv_heads = 1;
  a.q_len = tq;
  a.kv_len = tk;
  a.head_dim = a.value_dim = d;
  const int64_t qs[3] = {2 * tq * d, tq * d, d}, ks[3] = {tk * d, tk * d, d};
  a.q = q.data_as<float>();
  a.k = k.data_as<float>();
  a.v = v.data_as<float>();
  a.y = y.mutable_data_as<float>();
  for (int i = 0; i < 3; ++i) {
    a.q_stride[i] = a.y_stride[i] = qs[i];
    a.k_stride[i] = a.v_stride[i] = ks[i];
  }
  a.scale = 0.25f;
  a.causal = true;
  a.q_position0 = 0;
  attention_forward(a);
  expect_close(y, want);
}

// The vector-tile prefill path (attention_tile.h): rows padded to whole
// vectors (group 3 x 21 queries = 63 rows), odd head_dim, a window that
// hides whole tiles, and a batch whose valid length is 0 (all rows 0).
TEST(CpuAttention, TiledPrefillEdgeCases) {
  Tensor q = random({2, 6, 150, 24}, 1), k = random({2, 2, 150, 24}, 2),
         v = random({2, 2, 150, 40}, 3);
  Tensor lens = Tensor::from_vector<int64_t>({2}, {0, 150});
  for (const char* score : {"softmax", "sigmoid"}) {
    SCOPED_TRACE(score);
    AttrMap attrs{{"is_causal", 1}, {"window_left", 37}, {"score", score}};
    expect_matches_reference({q, k, v}, attrs);
    std::vector<Tensor> y =
        run(cpu_kernel(), {q, k, v, Tensor(), Tensor(), Tensor(), lens}, attrs);
    expect_matches_reference({q, k, v, Tensor(), Tensor(), Tensor(), lens},
                             attrs);
    for (int64_t i = 0; i < 6 * 150 * 40; ++i) {
      ASSERT_EQ(y[0].element_f64(i), 0.0) << i;
    }
  }
}

TEST(CpuAttention, RejectsWhatTheReferenceRejects) {
  Tensor q = random({1, 4, 2, 8}, 1), k = random({1, 3, 3, 8}, 2),
         v = random({1, 3, 3, 8}, 3);
  Node node;
  node.name = "attn";
  node.op = "Attention";
  node.domain = kSeqrtDomain;
  node.inputs = {0, 1, 2};
  node.outputs = {3};
  KernelContext ctx(node, schema(), {&q, &k, &v});
  Status status = cpu_kernel()(ctx);
  ASSERT_FALSE(status.is_ok());
  EXPECT_NE(status.message().find("multiple of kv heads"), std::string::npos);
}

}  // namespace
}  // namespace seqrt::cpu
