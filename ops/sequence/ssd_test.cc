#include <gtest/gtest.h>

#include <cmath>

#include "ops/sequence/scan_test_util.h"

namespace seqrt {
namespace {

using op_testing::expect_error;
using op_testing::expect_values;
using op_testing::info;
using op_testing::sym;
using scan_testing::expect_close;
using scan_testing::slice_axis;
using scan_testing::uniform;

Result<std::vector<Tensor>> ssd(const std::vector<Tensor>& inputs,
                                const AttrMap& attrs = {}) {
  return scan_testing::run_op(kSeqrtDomain, "SSD", inputs, attrs);
}

Tensor f64(std::vector<int64_t> dims, std::vector<double> values) {
  return Tensor::from_vector<double>(std::move(dims), values);
}

TEST(SSD, HandComputedOuterProductState) {
  // H = G = 1, P = 2, N = 1, L = 2, Δ = 0.5 (no softplus), A = -2:
  // decay e^-1; h1 = 0.5·x1·B1, h2 = e^-1·h1 + 0.5·x2·B2, y = h·C + D·x.
  Tensor x = f64({1, 2, 1, 2}, {1, 2, 3, 4});
  Tensor dt = f64({1, 2, 1}, {0.5, 0.5});
  Tensor a = f64({1}, {-2});
  Tensor bm = f64({1, 2, 1, 1}, {2, 1});
  Tensor cm = f64({1, 2, 1, 1}, {1, 3});
  Tensor d = f64({1}, {0.25});
  auto out = ssd({x, dt, a, bm, cm, d}, {{"dt_softplus", 0}});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  double e = std::exp(-1.0);
  double h1[2] = {1, 2};  // 0.5·x·2
  double h2[2] = {e * h1[0] + 1.5, e * h1[1] + 2.0};
  expect_values((*out)[0],
                {h1[0] + 0.25, h1[1] + 0.5, 3 * h2[0] + 0.75, 3 * h2[1] + 1.0},
                1e-12);
  expect_values((*out)[1], {h2[0], h2[1]}, 1e-6);  // f32 state
}

TEST(SSD, DtClampSoftplusBiasAndGate) {
  // softplus(-1 + 1) = ln 2, clamped to dt_max = 0.5; A = 0, so y = Δ·x·B·C.
  Tensor x = f64({1, 1, 1, 1}, {2});
  Tensor dt = f64({1, 1, 1}, {-1});
  Tensor a = f64({1}, {0});
  Tensor one = f64({1, 1, 1, 1}, {1});
  Tensor z = f64({1, 1, 1, 1}, {-0.5});
  Tensor bias = f64({1}, {1});
  auto clamped =
      ssd({x, dt, a, one, one, Tensor(), z, bias}, {{"dt_max", 0.5f}});
  ASSERT_TRUE(clamped.is_ok()) << clamped.status().to_string();
  double silu = -0.5 / (1 + std::exp(0.5));
  expect_values((*clamped)[0], {0.5 * 2 * silu}, 1e-7);
  auto raised =
      ssd({x, dt, a, one, one, Tensor(), Tensor(), bias}, {{"dt_min", 1.0f}});
  ASSERT_TRUE(raised.is_ok());
  expect_values((*raised)[0], {2.0}, 1e-7);
  auto plain = ssd({x, dt, a, one, one, Tensor(), Tensor(), bias});
  ASSERT_TRUE(plain.is_ok());
  expect_values((*plain)[0], {std::log(2.0) * 2}, 1e-12);
}

struct Problem {
  Tensor x, dt, a, bm, cm, d, z, bias;
};

Problem random_problem(int64_t batch, int64_t length, int64_t heads, int64_t p,
                       int64_t groups, int64_t n, uint64_t seed) {
  return Problem{uniform({batch, length, heads, p}, seed, -1, 1),
                 uniform({batch, length, heads}, seed + 1, -3, 1),
                 uniform({heads}, seed + 2, -2, -0.1),
                 uniform({batch, length, groups, n}, seed + 3, -1, 1),
                 uniform({batch, length, groups, n}, seed + 4, -1, 1),
                 uniform({heads}, seed + 5, -1, 1),
                 uniform({batch, length, heads, p}, seed + 6, -2, 2),
                 uniform({heads}, seed + 7, -0.5, 0.5)};
}

TEST(SSD, WholeEqualsTwoPartsWithState) {
  const int64_t length = 7, cut = 3;
  Problem p = random_problem(2, length, 4, 3, 2, 5, 51);
  auto whole = ssd({p.x, p.dt, p.a, p.bm, p.cm, p.d, p.z, p.bias});
  ASSERT_TRUE(whole.is_ok()) << whole.status().to_string();
  auto part = [&](int64_t begin, int64_t end, const Tensor& state) {
    return ssd({slice_axis(p.x, 1, begin, end), slice_axis(p.dt, 1, begin, end),
                p.a, slice_axis(p.bm, 1, begin, end),
                slice_axis(p.cm, 1, begin, end), p.d,
                slice_axis(p.z, 1, begin, end), p.bias, state});
  };
  auto first = part(0, cut, Tensor());
  ASSERT_TRUE(first.is_ok());
  auto second = part(cut, length, (*first)[1]);
  ASSERT_TRUE(second.is_ok());
  expect_close((*first)[0], slice_axis((*whole)[0], 1, 0, cut), 1e-6, "y1");
  expect_close((*second)[0], slice_axis((*whole)[0], 1, cut, length), 1e-6,
               "y2");
  expect_close((*second)[1], (*whole)[1], 1e-6, "state");
}

// SSD with H heads of P channels is SelectiveScan with D = H·P channels
// whose A rows are constant: the same problem in Mamba-1 layout.
TEST(SSD, EqualsSelectiveScanForScalarA) {
  const int64_t batch = 2, length = 6, heads = 4, p_size = 3, groups = 2,
                n_size = 5;
  Problem p = random_problem(batch, length, heads, p_size, groups, n_size, 61);
  auto want = ssd({p.x, p.dt, p.a, p.bm, p.cm, p.d, p.z, p.bias});
  ASSERT_TRUE(want.is_ok());
  const int64_t channels = heads * p_size;
  Tensor u = Tensor::allocate(DType::kF32, {batch, channels, length}).value();
  Tensor delta = u.clone(), z = u.clone();
  Tensor a = Tensor::allocate(DType::kF32, {channels, n_size}).value();
  Tensor dskip = Tensor::allocate(DType::kF32, {channels}).value();
  Tensor bias = dskip.clone();
  Tensor bm =
      Tensor::allocate(DType::kF32, {batch, groups, n_size, length}).value();
  Tensor cm = bm.clone();
  for (int64_t h = 0; h < heads; ++h) {
    for (int64_t q = 0; q < p_size; ++q) {
      const int64_t ch = h * p_size + q;
      dskip.set_element_f64(ch, p.d.element_f64(h));
      bias.set_element_f64(ch, p.bias.element_f64(h));
      for (int64_t n = 0; n < n_size; ++n) {
        a.set_element_f64(ch * n_size + n, p.a.element_f64(h));
      }
      for (int64_t b = 0; b < batch; ++b) {
        for (int64_t t = 0; t < length; ++t) {
          const int64_t to = (b * channels + ch) * length + t;
          const int64_t from = ((b * length + t) * heads + h) * p_size + q;
          u.set_element_f64(to, p.x.element_f64(from));
          z.set_element_f64(to, p.z.element_f64(from));
          delta.set_element_f64(to,
                                p.dt.element_f64((b * length + t) * heads + h));
        }
      }
    }
  }
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t g = 0; g < groups; ++g) {
      for (int64_t n = 0; n < n_size; ++n) {
        for (int64_t t = 0; t < length; ++t) {
          const int64_t to = ((b * groups + g) * n_size + n) * length + t;
          const int64_t from = ((b * length + t) * groups + g) * n_size + n;
          bm.set_element_f64(to, p.bm.element_f64(from));
          cm.set_element_f64(to, p.cm.element_f64(from));
        }
      }
    }
  }
  auto got = scan_testing::run_op(kSeqrtDomain, "SelectiveScan",
                                  {u, delta, a, bm, cm, dskip, z, bias});
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t t = 0; t < length; ++t) {
      for (int64_t ch = 0; ch < channels; ++ch) {
        EXPECT_NEAR((*got)[0].element_f64((b * channels + ch) * length + t),
                    (*want)[0].element_f64((b * length + t) * channels + ch),
                    1e-6);
      }
    }
  }
  // States: (B,D,N) with D = H·P is (B,H,P,N) flattened.
  expect_values((*got)[1], op_testing::values_of((*want)[1]), 1e-6);
}

TEST(SSD, Errors) {
  Problem p = random_problem(1, 4, 4, 3, 2, 5, 71);
  expect_error(ssd({p.x, p.dt, uniform({3}, 1, -1, 0), p.bm, p.cm}).status(),
               {"[SSD] node 'test'", "A must be (H) = (4), got (3)"});
  Tensor three = uniform({1, 4, 3, 5}, 2, -1, 1);
  expect_error(ssd({p.x, p.dt, p.a, three, three}).status(),
               {"H = 4 must be a multiple of G = 3"});
  expect_error(ssd({p.x, p.dt, p.a, p.bm, p.cm, Tensor(), Tensor(), Tensor(),
                    uniform({1, 4, 3, 4}, 3, 0, 1)})
                   .status(),
               {"past_state must be (B,H,P,N) = (1,4,3,5), got (1,4,3,4)"});
  expect_error(ssd({p.x, p.dt, p.a, p.bm, p.cm}, {{"chunk_size", 0}}).status(),
               {"chunk_size must be at least 1"});
  expect_error(
      ssd({p.x, p.dt, p.a, p.bm, p.cm}, {{"dt_min", 2.0f}, {"dt_max", 1.0f}})
          .status(),
      {"dt_min (2) must not exceed dt_max (1)"});
}

TEST(SSD, InferenceWithSymbolicDims) {
  Shape x{sym("batch"), sym("seq"), 8, 64};
  Shape bc{sym("batch"), sym("seq"), 1, 128};
  auto out = scan_testing::infer(
      kSeqrtDomain, "SSD",
      {info(DType::kF16, x),
       info(DType::kF16, Shape{sym("batch"), sym("seq"), 8}),
       info(DType::kF32, Shape{8}), info(DType::kF16, bc),
       info(DType::kF16, bc)});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].dtype, DType::kF16);
  EXPECT_EQ(*(*out)[0].shape, x);
  EXPECT_EQ(*(*out)[1].shape, (Shape{sym("batch"), 8, 64, 128}));
}

}  // namespace
}  // namespace seqrt
