#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "ops/op_test_util.h"
#include "ops/sequence/neural_memory.h"

namespace seqrt {
namespace {

using op_testing::expect_error;

Result<std::vector<Tensor>> run_memory(const std::vector<Tensor>& inputs,
                                       const AttrMap& attrs = {},
                                       size_t num_outputs = 2) {
  const OpSchema* schema =
      OpRegistry::global().find(kSeqrtDomain, "NeuralMemory");
  if (schema == nullptr) return not_found("NeuralMemory is not registered");
  std::vector<bool> present;
  std::vector<const Tensor*> args;
  for (const Tensor& tensor : inputs) {
    present.push_back(!tensor.empty());
    args.push_back(tensor.empty() ? nullptr : &tensor);
  }
  Node node =
      op_testing::make_node("NeuralMemory", attrs, present, num_outputs);
  node.domain = kSeqrtDomain;
  SEQRT_RETURN_IF_ERROR(check_node(node, *schema));
  KernelContext ctx(node, *schema, std::move(args));
  SEQRT_RETURN_IF_ERROR(schema->reference(ctx));
  return std::move(ctx.outputs());
}

Tensor uniform(std::vector<int64_t> dims, uint64_t seed, double lo, double hi,
               DType dtype = DType::kF64) {
  Tensor tensor = Tensor::allocate(dtype, std::move(dims)).value();
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  for (int64_t i = 0; i < tensor.num_elements(); ++i) {
    tensor.set_element_f64(i, dist(rng));
  }
  return tensor;
}

Tensor full(std::vector<int64_t> dims, double value) {
  Tensor tensor = Tensor::allocate(DType::kF64, std::move(dims)).value();
  for (int64_t i = 0; i < tensor.num_elements(); ++i) {
    tensor.set_element_f64(i, value);
  }
  return tensor;
}

// Inputs in op order (f64, so the reference is checked at full precision).
struct Inputs {
  Tensor q, k, v, theta, eta, alpha, w1, w2, past, position;
  std::vector<Tensor> list() const {
    return {q, k, v, theta, eta, alpha, w1, w2, past, position};
  }
};

Inputs random_inputs(int64_t batch, int64_t heads, int64_t seq, int64_t d,
                     int64_t m, int depth, uint64_t seed) {
  Inputs in;
  in.q = uniform({batch, heads, seq, d}, seed, -1, 1);
  in.k = uniform({batch, heads, seq, d}, seed + 1, -1, 1);
  in.v = uniform({batch, heads, seq, d}, seed + 2, -1, 1);
  in.theta = uniform({batch, heads, seq}, seed + 3, 0.0, 0.2);
  in.eta = uniform({batch, heads, seq}, seed + 4, 0.5, 0.95);
  in.alpha = uniform({batch, heads, seq}, seed + 5, 0.0, 0.1);
  double s1 = 1.0 / std::sqrt(static_cast<double>(d));
  in.w1 = uniform({heads, d, m}, seed + 6, -s1, s1);
  if (depth == 2) {
    double s2 = 1.0 / std::sqrt(static_cast<double>(m));
    in.w2 = uniform({heads, m, d}, seed + 7, -s2, s2);
  }
  return in;
}

// Tokens [begin, end) of a (B,H,T[,d]) tensor.
Tensor time_slice(const Tensor& x, int64_t begin, int64_t end) {
  std::vector<int64_t> dims = x.dims();
  int64_t seq = dims[2], inner = x.rank() == 4 ? dims[3] : 1;
  dims[2] = end - begin;
  Tensor out = Tensor::allocate(x.dtype(), dims).value();
  int64_t rows = dims[0] * dims[1], o = 0;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t i = (r * seq + begin) * inner; i < (r * seq + end) * inner;
         ++i) {
      out.set_element_f64(o++, x.element_f64(i));
    }
  }
  return out;
}

Inputs slice_inputs(const Inputs& in, int64_t begin, int64_t end) {
  Inputs out = in;
  for (Tensor* t : {&out.q, &out.k, &out.v, &out.theta, &out.eta, &out.alpha}) {
    *t = time_slice(*t, begin, end);
  }
  return out;
}

void expect_close(const Tensor& got, const Tensor& want, double tol,
                  const std::string& what) {
  ASSERT_EQ(got.dims(), want.dims()) << what;
  for (int64_t i = 0; i < want.num_elements(); ++i) {
    ASSERT_NEAR(got.element_f64(i), want.element_f64(i),
                tol * (1 + std::abs(want.element_f64(i))))
        << what << " element " << i;
  }
}

// M(x) of one head in the test's own code: depth 2, weights W1 (d,m), W2.
std::vector<double> mlp(const std::vector<double>& w1,
                        const std::vector<double>& w2, const double* x,
                        int64_t d, int64_t m, bool gelu) {
  std::vector<double> y(d, 0.0);
  for (int64_t j = 0; j < m; ++j) {
    double h = 0;
    for (int64_t i = 0; i < d; ++i) h += x[i] * w1[i * m + j];
    double a = gelu ? 0.5 * h * (1 + std::erf(h / std::sqrt(2.0)))
                    : h / (1 + std::exp(-h));
    for (int64_t l = 0; l < d; ++l) y[l] += a * w2[j * d + l];
  }
  return y;
}

std::vector<double> values(const Tensor& x, int64_t begin, int64_t count) {
  std::vector<double> out(count);
  for (int64_t i = 0; i < count; ++i) out[i] = x.element_f64(begin + i);
  return out;
}

TEST(NeuralMemory, Depth1ByHand) {
  // d = m = 1: M(x) = w·x, ∇w = 2k(kw − v).
  double w0 = 0.5, k0 = 1.0, v0 = 2.0, q0 = 3.0, k1 = -1.0, v1 = 0.5, q1 = 2.0;
  double th0 = 0.1, th1 = 0.2, et1 = 0.5, al0 = 0.1, al1 = 0.2;
  Inputs in;
  in.q = Tensor::from_vector<double>({1, 1, 2, 1}, {q0, q1});
  in.k = Tensor::from_vector<double>({1, 1, 2, 1}, {k0, k1});
  in.v = Tensor::from_vector<double>({1, 1, 2, 1}, {v0, v1});
  in.theta = Tensor::from_vector<double>({1, 1, 2}, {th0, th1});
  in.eta = Tensor::from_vector<double>({1, 1, 2}, {0.9, et1});
  in.alpha = Tensor::from_vector<double>({1, 1, 2}, {al0, al1});
  in.w1 = Tensor::from_vector<double>({1, 1, 1}, {w0});
  for (int64_t chunk : {1, 2}) {
    auto out = run_memory(in.list(), {{"depth", 1}, {"chunk_size", chunk}});
    ASSERT_TRUE(out.is_ok()) << out.status().to_string();
    double s1 = -th0 * 2 * k0 * (k0 * w0 - v0);
    double m1 = (1 - al0) * w0 + s1;
    double anchor = chunk == 1 ? m1 : w0;  // chunk 2: both tokens use w0
    double s2 = et1 * s1 - th1 * 2 * k1 * (k1 * anchor - v1);
    double m2 = (1 - al1) * m1 + s2;
    op_testing::expect_values((*out)[0], {q0 * m1, q1 * m2}, 1e-12);
    op_testing::expect_values((*out)[1], {m2, s2, anchor}, 1e-12);
  }
}

TEST(NeuralMemory, Depth2GradientMatchesFiniteDifferences) {
  const int64_t d = 3, m = 4;
  for (bool gelu : {true, false}) {
    Inputs in = random_inputs(1, 1, 1, d, m, 2, 11);
    double theta = 1e-3;
    in.theta = full({1, 1, 1}, theta);
    in.eta = full({1, 1, 1}, 0.0);
    in.alpha = full({1, 1, 1}, 0.0);
    AttrMap attrs = {{"activation", gelu ? "gelu" : "silu"}};
    auto out = run_memory(in.list(), attrs);
    ASSERT_TRUE(out.is_ok()) << out.status().to_string();
    std::vector<double> w1 = values(in.w1, 0, d * m),
                        w2 = values(in.w2, 0, m * d);
    std::vector<double> k = values(in.k, 0, d), v = values(in.v, 0, d);
    auto loss = [&]() {
      std::vector<double> y = mlp(w1, w2, k.data(), d, m, gelu);
      double sum = 0;
      for (int64_t l = 0; l < d; ++l) sum += (y[l] - v[l]) * (y[l] - v[l]);
      return sum;
    };
    // M_1 = M_0 − θ ∇ℓ, so ∇ℓ = (M_0 − M_1) / θ for every weight.
    for (int64_t p = 0; p < 2 * d * m; ++p) {
      double& weight = p < d * m ? w1[p] : w2[p - d * m];
      double saved = weight, step = 1e-6;
      weight = saved + step;
      double up = loss();
      weight = saved - step;
      double down = loss();
      weight = saved;
      double numeric = (up - down) / (2 * step);
      double analytic = (saved - (*out)[1].element_f64(p)) / theta;
      EXPECT_NEAR(analytic, numeric, 1e-6)
          << "weight " << p << " gelu " << gelu;
    }
  }
}

TEST(NeuralMemory, AlphaOneGivesWeightsEqualMomentum) {
  Inputs in = random_inputs(1, 2, 5, 4, 8, 2, 21);
  in.alpha = full({1, 2, 5}, 1.0);
  auto out = run_memory(in.list(), {{"chunk_size", 2}});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  const int64_t p_count = 2 * 4 * 8;
  for (int64_t row = 0; row < 2; ++row) {
    for (int64_t i = 0; i < p_count; ++i) {
      int64_t base = row * 3 * p_count;
      EXPECT_DOUBLE_EQ((*out)[1].element_f64(base + i),
                       (*out)[1].element_f64(base + p_count + i));
    }
  }
}

TEST(NeuralMemory, EtaZeroRemovesMomentum) {
  // With η = 0 the past momentum never enters: changing it changes nothing.
  Inputs in = random_inputs(1, 1, 6, 4, 8, 2, 31);
  in.eta = full({1, 1, 6}, 0.0);
  auto first = run_memory(in.list());
  ASSERT_TRUE(first.is_ok()) << first.status().to_string();
  Tensor past = (*first)[1].clone();
  const int64_t p_count = 2 * 4 * 8;
  in.past = past;
  auto a = run_memory(in.list());
  for (int64_t i = p_count; i < 2 * p_count; ++i) {
    past.set_element_f64(i, 5.0 * std::sin(static_cast<double>(i)));
  }
  in.past = past;
  auto b = run_memory(in.list());
  ASSERT_TRUE(a.is_ok() && b.is_ok());
  expect_close((*b)[0], (*a)[0], 1e-14, "y");
  expect_close((*b)[1], (*a)[1], 1e-14, "state");
}

TEST(NeuralMemory, ThetaZeroFreezesMemory) {
  const int64_t d = 4, m = 8, seq = 5;
  for (const char* activation : {"gelu", "silu"}) {
    Inputs in = random_inputs(1, 1, seq, d, m, 2, 41);
    in.theta = full({1, 1, seq}, 0.0);
    in.alpha = full({1, 1, seq}, 0.0);
    auto out = run_memory(in.list(), {{"activation", activation}});
    ASSERT_TRUE(out.is_ok()) << out.status().to_string();
    std::vector<double> w1 = values(in.w1, 0, d * m),
                        w2 = values(in.w2, 0, m * d);
    std::vector<double> q = values(in.q, 0, seq * d);
    for (int64_t t = 0; t < seq; ++t) {
      std::vector<double> want =
          mlp(w1, w2, q.data() + t * d, d, m, activation[0] == 'g');
      for (int64_t l = 0; l < d; ++l) {
        EXPECT_NEAR((*out)[0].element_f64(t * d + l), want[l], 1e-12);
      }
    }
  }
}

TEST(NeuralMemory, WholeEqualsPartsAtEverySplit) {
  const int64_t seq = 11;
  Inputs in = random_inputs(2, 2, seq, 4, 8, 2, 51);
  for (const char* retrieve : {"after_update", "before_update"}) {
    AttrMap attrs = {{"chunk_size", 4}, {"retrieve", retrieve}};
    auto whole = run_memory(in.list(), attrs);
    ASSERT_TRUE(whole.is_ok()) << whole.status().to_string();
    for (int64_t split = 1; split < seq; ++split) {
      // The second part starts at position `split` (mid-chunk unless 4 |
      // split); batch 1 also continues a first call that started at position 3.
      Inputs first = slice_inputs(in, 0, split);
      auto a = run_memory(first.list(), attrs);
      ASSERT_TRUE(a.is_ok()) << a.status().to_string();
      Inputs second = slice_inputs(in, split, seq);
      second.past = (*a)[1];
      second.position = Tensor::from_vector<int64_t>({2}, {split, split});
      auto b = run_memory(second.list(), attrs);
      ASSERT_TRUE(b.is_ok()) << b.status().to_string();
      expect_close((*a)[0], time_slice((*whole)[0], 0, split), 1e-12, "y1");
      expect_close((*b)[0], time_slice((*whole)[0], split, seq), 1e-12, "y2");
      expect_close((*b)[1], (*whole)[1], 1e-12, "state");
    }
  }
}

TEST(NeuralMemory, ChunkAnchorsFollowAbsolutePositions) {
  // Position 2 with chunk 4: tokens 0,1 finish chunk [0,4) with the past
  // anchor, token 2 starts a new chunk. Equal to running from position 0 on
  // a sequence whose first two tokens left the same state.
  Inputs in = random_inputs(1, 1, 6, 4, 8, 2, 61);
  AttrMap attrs = {{"chunk_size", 4}};
  auto whole = run_memory(in.list(), attrs);
  ASSERT_TRUE(whole.is_ok());
  Inputs shifted = in;
  shifted.position = Tensor::from_vector<int64_t>({1}, {2});
  auto moved = run_memory(shifted.list(), attrs);
  ASSERT_TRUE(moved.is_ok());
  // Different alignment, different anchors: the results must differ.
  double diff = 0;
  for (int64_t i = 0; i < (*whole)[0].num_elements(); ++i) {
    diff += std::abs((*whole)[0].element_f64(i) - (*moved)[0].element_f64(i));
  }
  EXPECT_GT(diff, 1e-6);
  // Position 4 is aligned like position 0.
  shifted.position = Tensor::from_vector<int64_t>({1}, {4});
  auto aligned = run_memory(shifted.list(), attrs);
  ASSERT_TRUE(aligned.is_ok());
  expect_close((*aligned)[0], (*whole)[0], 1e-14, "y");
}

TEST(NeuralMemory, OutputsDoNotDependOnTheFuture) {
  const int64_t seq = 9;
  Inputs in = random_inputs(1, 2, seq, 4, 8, 2, 71);
  for (int64_t chunk : {1, 4}) {
    AttrMap attrs = {{"chunk_size", chunk}};
    auto base = run_memory(in.list(), attrs);
    ASSERT_TRUE(base.is_ok());
    const int64_t cut = 5;
    Inputs changed = random_inputs(1, 2, seq, 4, 8, 2, 99);
    Inputs mixed = in;
    // Replace every per-token input from `cut` on.
    for (auto member : {&Inputs::q, &Inputs::k, &Inputs::v, &Inputs::theta,
                        &Inputs::eta, &Inputs::alpha}) {
      Tensor& x = mixed.*member;
      x = x.clone();  // copies share data; `in` must stay as it was
      int64_t inner = x.rank() == 4 ? 4 : 1;
      for (int64_t row = 0; row < 2; ++row) {
        for (int64_t i = (row * seq + cut) * inner; i < (row + 1) * seq * inner;
             ++i) {
          x.set_element_f64(i, (changed.*member).element_f64(i));
        }
      }
    }
    auto out = run_memory(mixed.list(), attrs);
    ASSERT_TRUE(out.is_ok());
    expect_close(time_slice((*out)[0], 0, cut), time_slice((*base)[0], 0, cut),
                 0.0, "prefix");
    double diff = 0;
    for (int64_t i = 0; i < (*out)[0].num_elements(); ++i) {
      diff += std::abs((*out)[0].element_f64(i) - (*base)[0].element_f64(i));
    }
    EXPECT_GT(diff, 1e-6);
  }
}

TEST(NeuralMemory, RetrieveBeforeUpdateUsesPreviousWeights) {
  // y_0 before the update is M_0(q_0) = the initial MLP.
  const int64_t d = 4, m = 8;
  Inputs in = random_inputs(1, 1, 3, d, m, 2, 81);
  auto out = run_memory(in.list(), {{"retrieve", "before_update"}});
  ASSERT_TRUE(out.is_ok());
  std::vector<double> want =
      mlp(values(in.w1, 0, d * m), values(in.w2, 0, m * d),
          values(in.q, 0, d).data(), d, m, true);
  op_testing::expect_values(time_slice((*out)[0], 0, 1), want, 1e-12);
}

TEST(NeuralMemory, FloatDtypesAndInference) {
  Inputs in = random_inputs(1, 1, 3, 4, 8, 2, 91);
  Inputs half = in;
  half.q = uniform({1, 1, 3, 4}, 91, -1, 1, DType::kF16);
  auto out = run_memory(half.list());
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].dtype(), DType::kF16);
  EXPECT_EQ((*out)[1].dtype(), DType::kF32);
  EXPECT_EQ((*out)[1].dims(), (std::vector<int64_t>{1, 1, 3 * 64}));

  const OpSchema* schema =
      OpRegistry::global().find(kSeqrtDomain, "NeuralMemory");
  ASSERT_NE(schema, nullptr);
  Shape q{Dim::symbol("batch"), 2, Dim::symbol("seq"), 16};
  std::vector<ValueInfo> infos(10);
  for (size_t i = 0; i < 6; ++i) infos[i] = op_testing::typed(DType::kBF16, q);
  infos[3] = infos[4] = infos[5] = op_testing::typed(
      DType::kF32, Shape{Dim::symbol("batch"), 2, Dim::symbol("seq")});
  infos[6] = op_testing::typed(DType::kF32, Shape{2, 16, 64});
  infos[7] = op_testing::typed(DType::kF32, Shape{2, 64, 16});
  std::vector<bool> present(10, true);
  present[8] = present[9] = false;
  infos[8] = infos[9] = ValueInfo{};
  Node node = op_testing::make_node("NeuralMemory", {}, present, 2);
  node.domain = kSeqrtDomain;
  InferContext ctx(node, *schema, infos);
  ASSERT_TRUE(schema->infer(ctx).is_ok());
  EXPECT_EQ(ctx.outputs()[0].dtype, DType::kBF16);
  EXPECT_EQ(*ctx.outputs()[0].shape, q);
  EXPECT_EQ(ctx.outputs()[1].dtype, DType::kF32);
  EXPECT_EQ(*ctx.outputs()[1].shape,
            (Shape{Dim::symbol("batch"), 2, 3 * 2 * 16 * 64}));
}

TEST(NeuralMemory, Errors) {
  Inputs in = random_inputs(2, 2, 3, 4, 8, 2, 5);
  auto fails = [&](Inputs bad, AttrMap attrs,
                   std::vector<std::string> fragments) {
    expect_error(run_memory(bad.list(), attrs).status(), fragments);
  };
  fails(in, {{"depth", 1}},
        {"[NeuralMemory] node 'test'", "depth 1 needs m = d"});
  Inputs square = random_inputs(2, 2, 3, 4, 4, 2, 5);
  fails(square, {{"depth", 1}}, {"'W2' is only for depth 2"});
  Inputs no_w2 = in;
  no_w2.w2 = Tensor();
  fails(no_w2, {}, {"depth 2 needs input 'W2'"});
  fails(in, {{"depth", 3}}, {"depth must be 1 or 2"});
  fails(in, {{"chunk_size", 0}}, {"chunk_size must be >= 1"});
  Inputs bad = in;
  bad.k = uniform({2, 2, 3, 5}, 1, -1, 1);
  fails(bad, {}, {"input 'k' must be (B,H,T,d) = (2,2,3,4), got (2,2,3,5)"});
  bad = in;
  bad.eta = uniform({2, 2, 4}, 1, 0, 1);
  fails(bad, {}, {"input 'eta' must be (B,H,T) = (2,2,3)"});
  bad = in;
  bad.w1 = uniform({3, 4, 8}, 1, 0, 1);
  fails(bad, {}, {"input 'W1' must be (H,d,m) = (2,4,m), got (3,4,8)"});
  bad = in;
  bad.w2 = uniform({2, 8, 5}, 1, 0, 1);
  fails(bad, {}, {"input 'W2' must be (H,m,d) = (2,8,4)"});
  bad = in;
  bad.past = uniform({2, 2, 64}, 1, 0, 1);
  fails(bad, {}, {"input 'past_state' must be (B,H,3·P) = (2,2,192)"});
  bad = in;
  bad.position = Tensor::from_vector<int64_t>({3}, {0, 0, 0});
  fails(bad, {}, {"input 'position' must be (B) = (2)"});
  bad.position = Tensor::from_vector<int32_t>({2}, {0, 0});
  fails(bad, {}, {"input 'position' must be i64"});
  bad.position = Tensor::from_vector<int64_t>({2}, {0, -1});
  fails(bad, {}, {"input 'position' must be >= 0, got -1"});
  bad = in;
  bad.q = Tensor::from_vector<int32_t>({1}, {0});
  fails(bad, {}, {"input 'q' must be"});
  expect_error(run_memory(in.list(), {{"activation", "relu"}}).status(),
               {"activation"});
}

}  // namespace
}  // namespace seqrt
