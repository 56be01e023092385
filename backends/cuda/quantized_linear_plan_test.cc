// The CUDA quantized Linear's host/device code (quantized_linear_plan.h)
// run on the host: the GEMV as each warp runs it (every lane's partial
// sums, then the shuffle tree's order of adding them) and the tiled GEMM's
// order of accumulation (16-deep slices of dequantised W), against the
// op's reference kernel, for bits 4 and 8, with and without zero points
// and bias, K short of a block and of a 4-byte group, every activation,
// and row counts on both sides of the GEMV/GEMM switch. Runs without a GPU.
#include "backends/cuda/quantized_linear_plan.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "ops/linalg/quantized_linear.h"
#include "ops/op_schema.h"
#include "ops/registry.h"

namespace seqrt::cuda {
namespace {

struct Case {
  std::string name;
  int64_t m = 1, k = 64, n = 8;
  int bits = 4;
  int64_t block = 32;
  bool zero_point = true, bias = true;
  int activation = 0;
};

const char* const kActivations[] = {"none",      "relu",    "gelu",
                                    "gelu_tanh", "sigmoid", "silu"};

Tensor random_tensor(DType dtype, std::vector<int64_t> dims, unsigned seed,
                     double lo, double hi) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  Tensor t = Tensor::allocate(dtype, std::move(dims)).value();
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    const double v = dist(gen);
    t.set_element_f64(i, dtype == DType::kU8 ? std::floor(v) : v);
  }
  return t;
}

// The GEMV's warp: 32 lanes' partial sums, added as __shfl_down_sync's
// tree adds them (offsets 16, 8, 4, 2, 1 into lane 0).
void gemv_like_device(QuantizedLinearArgs& a) {
  for (int64_t col = 0; col < a.n; ++col) {
    float lanes[kQuantizedWarp][kQuantizedGemvMaxRows];
    for (int lane = 0; lane < kQuantizedWarp; ++lane) {
      quantized_lane_sums(a, col, lane, lanes[lane]);
    }
    for (int64_t r = 0; r < a.m; ++r) {
      for (int offset = kQuantizedWarp / 2; offset > 0; offset /= 2) {
        for (int lane = 0; lane + offset < kQuantizedWarp; ++lane) {
          lanes[lane][r] += lanes[lane + offset][r];
        }
      }
      quantized_store(a, r, col, lanes[0][r]);
    }
  }
}

// The GEMM's order: each output accumulates slice by slice, k ascending.
void gemm_like_device(QuantizedLinearArgs& a) {
  for (int64_t r = 0; r < a.m; ++r) {
    for (int64_t col = 0; col < a.n; ++col) {
      float acc = 0.0f;
      for (int64_t k0 = 0; k0 < a.k; k0 += 16) {
        for (int64_t kk = k0; kk < k0 + 16 && kk < a.k; ++kk) {
          acc += a.x[r * a.k + kk] * quantized_weight(a, col, kk);
        }
      }
      quantized_store(a, r, col, acc);
    }
  }
}

void check(const Case& c, unsigned seed) {
  SCOPED_TRACE(c.name);
  const int64_t blocks = (c.k + c.block - 1) / c.block;
  const double code_max = c.bits == 4 ? 16.0 : 256.0;
  std::vector<Tensor> inputs = {
      random_tensor(DType::kF32, {c.m, c.k}, seed, -1.0, 1.0),
      random_tensor(DType::kU8, {c.n, quantized_row_bytes(c.k, c.bits)},
                    seed + 1, 0.0, 256.0),
      c.bias ? random_tensor(DType::kF32, {c.n}, seed + 2, -1.0, 1.0)
             : Tensor(),
      random_tensor(DType::kF32, {c.n, blocks}, seed + 3, 0.005, 0.05),
      c.zero_point
          ? random_tensor(DType::kU8, {c.n, blocks}, seed + 4, 0.0, code_max)
          : Tensor()};
  const AttrMap attrs = {
      {"bits", int64_t{c.bits}},
      {"block_size", c.block},
      {"K", c.k},
      {"activation", std::string(kActivations[c.activation])}};
  const OpSchema* schema = OpRegistry::global().find(kSeqrtDomain, "Linear");
  ASSERT_NE(schema, nullptr);
  Node node;
  node.name = c.name;
  node.domain = kSeqrtDomain;
  node.op = "Linear";
  node.attrs = attrs;
  std::vector<const Tensor*> args;
  for (size_t i = 0; i < inputs.size(); ++i) {
    node.inputs.push_back(inputs[i].empty() ? kNoValue : ValueId(i));
    args.push_back(inputs[i].empty() ? nullptr : &inputs[i]);
  }
  node.outputs.push_back(ValueId(inputs.size()));
  ASSERT_TRUE(check_node(node, *schema).is_ok());
  KernelContext ctx(node, *schema, args);
  ASSERT_TRUE(schema->reference(ctx).is_ok());
  const Tensor& want = ctx.outputs()[0];

  std::vector<float> y(static_cast<size_t>(c.m * c.n), NAN);
  QuantizedLinearArgs a;
  a.x = inputs[kLinearX].data_as<float>();
  a.w = static_cast<const uint8_t*>(inputs[kLinearW].data());
  a.bias = c.bias ? inputs[kLinearB].data_as<float>() : nullptr;
  a.scale = inputs[kLinearWScale].data_as<float>();
  a.zero_point =
      c.zero_point
          ? static_cast<const uint8_t*>(inputs[kLinearWZeroPoint].data())
          : nullptr;
  a.y = y.data();
  a.m = c.m;
  a.n = c.n;
  a.k = c.k;
  a.bits = c.bits;
  a.block_size = c.block;
  a.n_blocks = blocks;
  a.row_bytes = quantized_row_bytes(c.k, c.bits);
  a.activation = c.activation;
  if (c.m <= kQuantizedGemvMaxRows) {
    gemv_like_device(a);
  } else {
    gemm_like_device(a);
  }
  ASSERT_EQ(want.num_elements(), c.m * c.n);
  for (int64_t i = 0; i < want.num_elements(); ++i) {
    const double v = want.element_f64(i);
    ASSERT_NEAR(y[i], v, 1e-4 + 1e-4 * std::fabs(v)) << "element " << i;
  }
}

TEST(CudaQuantizedLinearPlan, MatchesTheReferenceOnBothPaths) {
  const std::vector<Case> cases = {
      {"q4_m1_zp", 1, 64, 40, 4, 16, true, true, 0},
      {"q4_m1_odd_k_short_block_gelu", 1, 77, 33, 4, 32, true, true, 2},
      {"q4_m1_k_past_32_groups_silu", 1, 600, 9, 4, 64, false, true, 5},
      {"q8_m3_no_zp_sigmoid", 3, 51, 19, 8, 16, false, true, 4},
      {"q8_m8_gelu_tanh", 8, 130, 45, 8, 128, true, true, 3},
      {"q4_m9_gemm_odd_k_relu", 9, 75, 65, 4, 32, true, true, 1},
      {"q8_m70_gemm_no_bias", 70, 83, 20, 8, 16, true, false, 0},
      {"q4_m70_gemm_no_zp_k_tiles", 70, 300, 17, 4, 64, false, true, 5},
  };
  unsigned seed = 10;
  for (const Case& c : cases) {
    check(c, seed);
    seed += 10;
  }
}

}  // namespace
}  // namespace seqrt::cuda
