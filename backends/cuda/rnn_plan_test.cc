// The CUDA recurrent kernels' host/device code (rnn_plan.h) run on the
// host: the activations against RnnActivation, and whole sequences (X·Wᵀ
// by a plain loop standing in for the GEMM, then every step of every unit
// with rnn_unit_step, as each warp runs it) against the op's reference
// kernel, for every direction, layout, sequence_lens, initial state,
// peepholes, clip, activation and GRU reset form. Runs without a GPU.
#include "backends/cuda/rnn_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "ops/op_test_util.h"
#include "ops/rnn/rnn_common.h"

namespace seqrt::cuda {
namespace {

Tensor random_f32(std::vector<int64_t> dims, unsigned seed, float scale) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-scale, scale);
  Tensor t = Tensor::allocate(DType::kF32, std::move(dims)).value();
  float* data = t.mutable_data_as<float>();
  for (int64_t i = 0; i < t.num_elements(); ++i) data[i] = dist(gen);
  return t;
}

const float* data_or_null(const KernelContext& ctx, size_t i) {
  return ctx.has_input(i) ? ctx.input(i)->data_as<float>() : nullptr;
}

// The CUDA kernel's algorithm on the host: Y, Y_h (and Y_c), all f32.
Result<std::vector<Tensor>> run_like_device(KernelContext& ctx, RnnKind kind) {
  SEQRT_ASSIGN_OR_RETURN(RnnConfig config, rnn_config(ctx, kind));
  SEQRT_ASSIGN_OR_RETURN(RnnDims d, check_rnn(ctx, config));
  std::vector<int64_t> lens = rnn_sequence_lengths(ctx, d);
  const RnnCell cell = rnn_cell_from_config(config);
  const RnnScratch plan = plan_rnn_scratch(cell, d.seq, d.batch, d.hidden);
  // NaN everywhere: a piece read before it is written shows in the result.
  std::vector<float> scratch(static_cast<size_t>(plan.total),
                             std::numeric_limits<float>::quiet_NaN());
  const int64_t gh = config.gates * d.hidden, rows = d.seq * d.batch;
  const float* x = data_or_null(ctx, kRnnX);
  const float* w = data_or_null(ctx, kRnnW);
  float* xw = scratch.data() + plan.xw;
  for (int64_t dir = 0; dir < d.directions; ++dir) {
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t k = 0; k < gh; ++k) {
        float sum = 0.0f;
        for (int64_t e = 0; e < d.input; ++e) {
          sum += x[i * d.input + e] * w[(dir * gh + k) * d.input + e];
        }
        xw[(dir * rows + i) * gh + k] = sum;
      }
    }
  }
  const bool lstm = kind == RnnKind::kLstm;
  float* c = lstm ? scratch.data() + plan.c : nullptr;
  const int64_t state = d.directions * d.batch * d.hidden;
  for (int64_t i = 0; i < state; ++i) {
    rnn_init_state_element(cell, d.batch, d.hidden, i,
                           data_or_null(ctx, kRnnInitialH),
                           lstm ? data_or_null(ctx, kRnnInitialC) : nullptr,
                           scratch.data() + plan.h0, c);
  }
  std::vector<float> y(static_cast<size_t>(rows * d.directions * d.hidden));
  std::vector<float> yh(static_cast<size_t>(state)), yc(yh.size());
  RnnStepArgs a;
  a.cell = cell;
  a.seq = d.seq;
  a.batch = d.batch;
  a.hidden = d.hidden;
  a.lens = lens.data();
  a.xw = xw;
  a.r = data_or_null(ctx, kRnnR);
  a.bias = data_or_null(ctx, kRnnB);
  a.peep = lstm ? data_or_null(ctx, kRnnP) : nullptr;
  a.c = c;
  a.z = scratch.data() + plan.z;
  a.rh = scratch.data() + plan.rh;
  a.y = y.data();
  auto dot = [&](const float* h, const float* row) {
    float sum = 0.0f;
    for (int64_t k = 0; k < d.hidden; ++k) sum += h[k] * row[k];
    return sum;
  };
  float* h[2] = {scratch.data() + plan.h0, scratch.data() + plan.h1};
  const int64_t steps = *std::max_element(lens.begin(), lens.end());
  for (int64_t s = 0; s < steps; ++s) {
    a.h_prev = h[s % 2];
    a.h_next = h[1 - s % 2];
    // Units of one phase are independent: any order is the device's.
    for (int phase = 0; phase < rnn_phases(cell); ++phase) {
      for (int64_t u = state - 1; u >= 0; --u) {
        rnn_unit_step(a, u, s, phase, dot, true);
      }
    }
  }
  for (int64_t i = 0; i < state; ++i) {
    rnn_store_state_element(cell, d.batch, d.hidden, i, lens.data(),
                            h[steps % 2], c, yh.data(),
                            lstm ? yc.data() : nullptr);
  }
  std::vector<Tensor> out = {
      Tensor::from_vector<float>(rnn_y_dims(config, d), y),
      Tensor::from_vector<float>(rnn_state_dims(config, d), yh)};
  if (lstm) {
    out.push_back(Tensor::from_vector<float>(rnn_state_dims(config, d), yc));
  }
  return out;
}

struct Case {
  std::string op;
  int64_t seq = 5, batch = 3, input = 7, hidden = 9;
  std::string direction = "forward";
  int64_t layout = 0;
  bool bias = true, initial = true, peepholes = false;
  std::vector<int32_t> lens;
  AttrMap attrs;
};

void expect_matches_reference(const Case& c) {
  SCOPED_TRACE(c.op + " " + c.direction + " layout " +
               std::to_string(c.layout));
  const RnnKind kind = c.op == "LSTM"  ? RnnKind::kLstm
                       : c.op == "GRU" ? RnnKind::kGru
                                       : RnnKind::kRnn;
  const int64_t gates = c.op == "LSTM" ? 4 : (c.op == "GRU" ? 3 : 1);
  const int64_t dirs = c.direction == "bidirectional" ? 2 : 1;
  std::vector<int64_t> x_dims = {c.seq, c.batch, c.input};
  std::vector<int64_t> state = {dirs, c.batch, c.hidden};
  if (c.layout == 1) {
    x_dims = {c.batch, c.seq, c.input};
    state = {c.batch, dirs, c.hidden};
  }
  std::vector<Tensor> inputs = {
      random_f32(x_dims, 1, 1.0f),
      random_f32({dirs, gates * c.hidden, c.input}, 2, 0.4f),
      random_f32({dirs, gates * c.hidden, c.hidden}, 3, 0.4f),
      c.bias ? random_f32({dirs, 2 * gates * c.hidden}, 4, 1.0f) : Tensor(),
      c.lens.empty()
          ? Tensor()
          : Tensor::from_vector<int32_t>({int64_t(c.lens.size())}, c.lens),
      c.initial ? random_f32(state, 5, 1.0f) : Tensor()};
  if (kind == RnnKind::kLstm) {
    inputs.push_back(c.initial ? random_f32(state, 6, 1.0f) : Tensor());
    inputs.push_back(c.peepholes ? random_f32({dirs, 3 * c.hidden}, 7, 1.0f)
                                 : Tensor());
  }
  AttrMap attrs = c.attrs;
  attrs["hidden_size"] = c.hidden;
  attrs["direction"] = c.direction;
  attrs["layout"] = c.layout;
  const size_t outputs = kind == RnnKind::kLstm ? 3 : 2;
  Result<std::vector<Tensor>> want =
      op_testing::run_op(c.op, inputs, attrs, outputs);
  ASSERT_TRUE(want.is_ok()) << want.status().to_string();
  const OpSchema& schema = op_testing::schema_of(c.op);
  std::vector<bool> present;
  std::vector<const Tensor*> args;
  for (const Tensor& t : inputs) {
    present.push_back(!t.empty());
    args.push_back(t.empty() ? nullptr : &t);
  }
  Node node = op_testing::make_node(c.op, attrs, present, outputs);
  KernelContext ctx(node, schema, args);
  Result<std::vector<Tensor>> got = run_like_device(ctx, kind);
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  ASSERT_EQ(got->size(), want->size());
  for (size_t i = 0; i < got->size(); ++i) {
    const Tensor& g = (*got)[i];
    const Tensor& e = (*want)[i];
    ASSERT_EQ(g.dims(), e.dims()) << "output " << i;
    for (int64_t k = 0; k < g.num_elements(); ++k) {
      const double want_k = e.element_f64(k);
      ASSERT_NEAR(g.element_f64(k), want_k, 1e-4 + 1e-4 * std::abs(want_k))
          << "output " << i << " element " << k;
    }
  }
}

TEST(CudaRnnPlan, ActivationsMatchTheOp) {
  struct Named {
    RnnActivation::Fn fn;
    float alpha, beta;
  };
  using Fn = RnnActivation::Fn;
  const Named all[] = {{Fn::kRelu, 0, 0},
                       {Fn::kTanh, 0, 0},
                       {Fn::kSigmoid, 0, 0},
                       {Fn::kAffine, 0.5f, -0.3f},
                       {Fn::kLeakyRelu, 0.1f, 0},
                       {Fn::kThresholdedRelu, 0.4f, 0},
                       {Fn::kScaledTanh, 1.5f, 0.7f},
                       {Fn::kHardSigmoid, 0.2f, 0.5f},
                       {Fn::kElu, 0.8f, 0},
                       {Fn::kSoftsign, 0, 0},
                       {Fn::kSoftplus, 0, 0}};
  for (const Named& n : all) {
    RnnConfig config;
    config.activations = {RnnActivation{n.fn, n.alpha, n.beta}};
    const RnnCell cell = rnn_cell_from_config(config);
    for (float x :
         {-30.0f, -4.0f, -0.4f, -0.0f, 0.0f, 0.3f, 0.4f, 2.5f, 9.0f, 40.0f}) {
      EXPECT_FLOAT_EQ(rnn_activate(cell.act[0][0], x),
                      config.activations[0].apply(x))
          << "activation " << static_cast<int>(n.fn) << " at " << x;
    }
  }
}

TEST(CudaRnnPlan, ClipBoundsTheGateInput) {
  RnnConfig config;
  config.has_clip = true;
  config.clip = 0.5f;
  config.activations = {RnnActivation{RnnActivation::Fn::kAffine, 1.0f, 0.0f}};
  const RnnCell cell = rnn_cell_from_config(config);
  EXPECT_EQ(rnn_gate(cell, 0, 0, 3.0f), 0.5f);
  EXPECT_EQ(rnn_gate(cell, 0, 0, -3.0f), -0.5f);
  EXPECT_EQ(rnn_gate(cell, 0, 0, 0.25f), 0.25f);
}

TEST(CudaRnnPlan, RnnMatchesReference) {
  Case c{"RNN"};
  expect_matches_reference(c);
  c.direction = "reverse";
  c.lens = {5, 2, 4};
  c.attrs["activations"] = std::vector<std::string>{"Relu"};
  expect_matches_reference(c);
  c.direction = "bidirectional";
  c.layout = 1;
  c.lens = {3, 0, 5};
  c.attrs["activations"] = std::vector<std::string>{"LeakyRelu", "Tanh"};
  c.attrs["activation_alpha"] = std::vector<float>{0.2f};
  expect_matches_reference(c);
  Case bare{"RNN"};
  bare.bias = bare.initial = false;
  bare.hidden = 40;  // more than a warp's lanes: each lane sums two terms
  expect_matches_reference(bare);
}

TEST(CudaRnnPlan, GruBothResetFormsMatchReference) {
  for (int64_t lbr : {0, 1}) {
    SCOPED_TRACE("linear_before_reset " + std::to_string(lbr));
    Case c{"GRU"};
    c.attrs["linear_before_reset"] = lbr;
    expect_matches_reference(c);
    c.direction = "bidirectional";
    c.lens = {4, 0, 5};
    c.layout = 1;
    expect_matches_reference(c);
    c.direction = "reverse";
    c.layout = 0;
    c.lens = {2, 5, 1};
    c.attrs["clip"] = 0.6f;
    c.attrs["activations"] =
        std::vector<std::string>{"HardSigmoid", "Softsign"};
    expect_matches_reference(c);
    Case bare{"GRU"};
    bare.bias = bare.initial = false;
    bare.attrs["linear_before_reset"] = lbr;
    expect_matches_reference(bare);
  }
}

TEST(CudaRnnPlan, LstmMatchesReference) {
  Case c{"LSTM"};
  expect_matches_reference(c);
  c.peepholes = true;
  c.attrs["clip"] = 0.8f;
  c.direction = "bidirectional";
  c.lens = {5, 0, 3};
  expect_matches_reference(c);
  c.layout = 1;
  c.direction = "reverse";
  c.attrs["input_forget"] = int64_t{1};
  expect_matches_reference(c);
  Case act{"LSTM"};
  act.attrs["activations"] =
      std::vector<std::string>{"HardSigmoid", "ScaledTanh", "Affine"};
  act.attrs["activation_alpha"] = std::vector<float>{0.3f, 0.9f, 1.2f};
  act.attrs["activation_beta"] = std::vector<float>{0.4f, 1.1f, 0.1f};
  expect_matches_reference(act);
  Case bare{"LSTM"};
  bare.bias = bare.initial = false;
  bare.input = 1;
  expect_matches_reference(bare);
}

TEST(CudaRnnPlan, ScratchPiecesAreDisjointAndAligned) {
  RnnConfig config;
  config.kind = RnnKind::kGru;
  config.gates = 3;
  config.directions = 2;
  config.activations.resize(4);
  const RnnCell gru = rnn_cell_from_config(config);
  const RnnScratch s = plan_rnn_scratch(gru, 7, 3, 5);
  const int64_t state = 2 * 3 * 5;
  const int64_t starts[] = {s.lens, s.xw, s.h0, s.h1, s.z, s.rh, s.total};
  const int64_t sizes[] = {2 * 3, 2 * 7 * 3 * 3 * 5, state, state, state,
                           state};
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(starts[i] % 64, 0) << "piece " << i;
    EXPECT_GE(starts[i + 1], starts[i] + sizes[i]) << "piece " << i;
  }
  // linear_before_reset has one phase: no z or r ⊙ h kept between them.
  config.linear_before_reset = true;
  const RnnScratch one =
      plan_rnn_scratch(rnn_cell_from_config(config), 7, 3, 5);
  EXPECT_EQ(one.total, one.z);
  EXPECT_LT(one.total, s.total);
}

TEST(CudaRnnPlan, LaunchSizesStayWithinTheGrid) {
  EXPECT_EQ(rnn_warp_blocks(0, 256), 0);
  EXPECT_EQ(rnn_warp_blocks(1, 256), 1);
  EXPECT_EQ(rnn_warp_blocks(8, 256), 1);  // 8 warps of 32 threads
  EXPECT_EQ(rnn_warp_blocks(9, 256), 2);
  EXPECT_EQ(rnn_warp_blocks(int64_t{1} << 40, 256), kMaxRnnBlocks);
  EXPECT_EQ(rnn_element_blocks(0, 256), 0);
  EXPECT_EQ(rnn_element_blocks(257, 256), 2);
  EXPECT_EQ(rnn_element_blocks(int64_t{1} << 40, 256), kMaxRnnBlocks);
}

TEST(CudaRnnPlan, LayoutIndicesMatchTheOp) {
  for (int64_t layout : {0, 1}) {
    RnnConfig config;
    config.directions = 2;
    config.layout = layout;
    config.activations.resize(2);
    const RnnCell cell = rnn_cell_from_config(config);
    const RnnDims d{4, 3, 2, 5, 2};
    for (int64_t t = 0; t < d.seq; ++t) {
      for (int64_t b = 0; b < d.batch; ++b) {
        EXPECT_EQ(rnn_x_index(cell, d.seq, d.batch, t, b),
                  rnn_x_row(config, d, t, b));
        for (int64_t dir = 0; dir < 2; ++dir) {
          EXPECT_EQ(rnn_y_index(cell, d.seq, d.batch, t, dir, b),
                    rnn_y_row(config, d, t, dir, b));
          EXPECT_EQ(rnn_state_index(cell, d.batch, dir, b),
                    rnn_state_row(config, d, dir, b));
        }
      }
    }
  }
}

}  // namespace
}  // namespace seqrt::cuda
