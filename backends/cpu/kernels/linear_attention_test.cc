#include "backends/cpu/kernels/linear_attention.h"

#include <gtest/gtest.h>

#include <string>

#include "backends/cpu/kernels/chunked_test_util.h"

namespace seqrt::cpu {
namespace {

using testing::concat_axis;
using testing::expect_close;
using testing::random;
using testing::slice_axis;

Result<std::vector<Tensor>> run(const std::vector<Tensor>& inputs,
                                const AttrMap& attrs,
                                std::optional<ScanForm> form,
                                bool reference = false) {
  testing::KernelCall call;
  if (!reference) {
    call = [form](KernelContext& ctx) {
      return run_linear_attention_cpu(ctx, form);
    };
  }
  return testing::run_kernel(kOnnxDomain, "LinearAttention", inputs, attrs,
                             call);
}

std::vector<Tensor> run_ok(const std::vector<Tensor>& inputs,
                           const AttrMap& attrs,
                           std::optional<ScanForm> form = std::nullopt,
                           bool reference = false) {
  auto out = run(inputs, attrs, form, reference);
  EXPECT_TRUE(out.is_ok()) << out.status().to_string();
  return out.is_ok() ? *out : std::vector<Tensor>(2);
}

// A packed problem: B = 2, H_q = 4, H_kv = 2, d_k = 8, d_v = 12.
struct Problem {
  static constexpr int64_t kB = 2, kHq = 4, kHkv = 2, kDk = 8, kDv = 12;
  Tensor q, k, v, past, decay, beta;
  AttrMap attrs;
  Problem(const std::string& rule, int64_t t, bool per_key_decay, uint64_t seed,
          int64_t chunk = 16) {
    q = random(DType::kF32, {kB, t, kHq * kDk}, seed);
    k = random(DType::kF32, {kB, t, kHkv * kDk}, seed + 1, -0.4, 0.4);
    v = random(DType::kF32, {kB, t, kHkv * kDv}, seed + 2);
    past = random(DType::kF32, {kB, kHkv, kDk, kDv}, seed + 3);
    decay = random(DType::kF32, {kB, t, per_key_decay ? kHkv * kDk : kHkv},
                   seed + 4, -0.3, 0.0);
    beta = random(DType::kF32, {kB, t, kHkv}, seed + 5, 0.0, 1.0);
    attrs = {{"update_rule", Attribute(rule)},
             {"q_num_heads", Attribute(kHq)},
             {"kv_num_heads", Attribute(kHkv)},
             {"chunk_size", Attribute(chunk)}};
  }
  std::vector<Tensor> inputs() const { return {q, k, v, past, decay, beta}; }
  // Tokens [begin, end), with `state` as past_state.
  std::vector<Tensor> part(int64_t begin, int64_t end,
                           const Tensor& state) const {
    return {slice_axis(q, 1, begin, end),     slice_axis(k, 1, begin, end),
            slice_axis(v, 1, begin, end),     state,
            slice_axis(decay, 1, begin, end), slice_axis(beta, 1, begin, end)};
  }
};

TEST(CpuLinearAttention, ChunkedRulesMatchReferenceInEveryForm) {
  for (const char* rule : {"linear", "gated", "delta", "gated_delta"}) {
    Problem x(rule, 90, false, 3);
    auto want = run_ok(x.inputs(), x.attrs, std::nullopt, true);
    for (ScanForm form :
         {ScanForm::kRecurrent, ScanForm::kParallel, ScanForm::kChunkwise}) {
      auto got = run_ok(x.inputs(), x.attrs, form);
      std::string what = std::string(rule) + " " + scan_form_name(form);
      expect_close(got[0], want[0], 1e-5, what);
      expect_close(got[1], want[1], 1e-5, what + " state");
    }
  }
}

TEST(CpuLinearAttention, PerKeyDecayRunsTheTokenLoop) {
  for (const char* rule : {"gated", "gated_delta"}) {
    Problem x(rule, 37, true, 13);
    auto want = run_ok(x.inputs(), x.attrs, std::nullopt, true);
    auto got = run_ok(x.inputs(), x.attrs);
    expect_close(got[0], want[0], 1e-5, rule);
    expect_close(got[1], want[1], 1e-5, std::string(rule) + " state");
    // The intra-chunk decay is per channel here: no chunked form.
    auto forced = run(x.inputs(), x.attrs, ScanForm::kChunkwise);
    EXPECT_EQ(forced.status().code(), StatusCode::kUnsupported) << rule;
  }
}

TEST(CpuLinearAttention, SharedBetaAndLongChunks) {
  Problem x("gated_delta", 300, false, 17, 128);
  x.beta = random(DType::kF32, {Problem::kB, 300, 1}, 18, 0.0, 1.0);
  auto want = run_ok(x.inputs(), x.attrs, std::nullopt, true);
  for (ScanForm form : {ScanForm::kChunkwise, ScanForm::kParallel}) {
    auto got = run_ok(x.inputs(), x.attrs, form);
    expect_close(got[0], want[0], 1e-4, scan_form_name(form));
    expect_close(got[1], want[1], 1e-4, scan_form_name(form));
  }
}

TEST(CpuLinearAttention, WholeEqualsTwoPartsWithState) {
  for (const char* rule : {"linear", "gated", "gated_delta"}) {
    Problem x(rule, 100, false, 23);
    auto whole = run_ok(x.inputs(), x.attrs);
    auto first = run_ok(x.part(0, 41, x.past), x.attrs);
    auto second = run_ok(x.part(41, 100, first[1]), x.attrs);
    expect_close(concat_axis(first[0], second[0], 1), whole[0], 1e-5, rule);
    expect_close(second[1], whole[1], 1e-5, rule);
  }
}

TEST(CpuLinearAttention, PrefillThenStepsEqualsAllAtOnce) {
  for (const char* rule : {"gated", "delta", "gated_delta"}) {
    const int64_t prefill = 48, steps = 5;
    Problem x(rule, prefill + steps, false, 33);
    x.past = Tensor();  // a fresh sequence
    auto whole = run_ok(x.inputs(), x.attrs);
    auto out = run_ok(x.part(0, prefill, Tensor()), x.attrs);
    Tensor y = out[0], state = out[1];
    for (int64_t t = prefill; t < prefill + steps; ++t) {
      auto step = run_ok(x.part(t, t + 1, state), x.attrs);
      y = concat_axis(y, step[0], 1);
      state = step[1];
    }
    expect_close(y, whole[0], 1e-5, rule);
    expect_close(state, whole[1], 1e-5, rule);
  }
}

TEST(CpuLinearAttention, StrongDecayStaysFinite) {
  // log-decays down to −200 per token (and −inf): e^{c_j − c_s} only.
  Problem x("gated", 80, false, 43);
  for (int64_t i = 0; i < x.decay.num_elements(); ++i) {
    x.decay.set_element_f64(i, i % 7 == 0 ? -INFINITY : -200.0 * (i % 3));
  }
  auto want = run_ok(x.inputs(), x.attrs, std::nullopt, true);
  auto got = run_ok(x.inputs(), x.attrs, ScanForm::kChunkwise);
  expect_close(got[0], want[0], 1e-5, "y");
  expect_close(got[1], want[1], 1e-5, "state");
}

}  // namespace
}  // namespace seqrt::cpu
