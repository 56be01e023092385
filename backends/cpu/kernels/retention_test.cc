#include "backends/cpu/kernels/retention.h"

#include <gtest/gtest.h>

#include <cmath>

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
    call = [form](KernelContext& ctx) { return run_retention_cpu(ctx, form); };
  }
  return testing::run_kernel(kSeqrtDomain, "Retention", inputs, attrs, call);
}

std::vector<Tensor> run_ok(const std::vector<Tensor>& inputs,
                           const AttrMap& attrs,
                           std::optional<ScanForm> form = std::nullopt,
                           bool reference = false) {
  auto out = run(inputs, attrs, form, reference);
  EXPECT_TRUE(out.is_ok()) << out.status().to_string();
  return out.is_ok() ? *out : std::vector<Tensor>(2);
}

struct Problem {
  Tensor q, k, v, past;
  Problem(int64_t b, int64_t h, int64_t t, int64_t dk, int64_t dv,
          bool with_past, uint64_t seed)
      : q(random(DType::kF32, {b, h, t, dk}, seed)),
        k(random(DType::kF32, {b, h, t, dk}, seed + 1)),
        v(random(DType::kF32, {b, h, t, dv}, seed + 2)) {
    if (with_past) past = random(DType::kF32, {b, h, dk, dv}, seed + 3);
  }
  std::vector<Tensor> inputs() const { return {q, k, v, past}; }
};

TEST(CpuRetention, ChoosesFormByShape) {
  EXPECT_EQ(choose_scan_form(1, 64), ScanForm::kRecurrent);
  EXPECT_EQ(choose_scan_form(64, 64), ScanForm::kParallel);
  EXPECT_EQ(choose_scan_form(65, 64), ScanForm::kChunkwise);
  // Chunks follow the hint up to the shape's cap (kMinChunk at least).
  EXPECT_EQ(chunk_length_for(ScanForm::kChunkwise, 4096, 64, 128, 128), 32);
  EXPECT_EQ(chunk_length_for(ScanForm::kChunkwise, 4096, 64, 64, 64), 16);
  EXPECT_EQ(chunk_length_for(ScanForm::kChunkwise, 4096, 64, 16, 24), 16);
  EXPECT_EQ(chunk_length_for(ScanForm::kChunkwise, 4096, 8, 128, 128), 8);
  EXPECT_EQ(chunk_length_for(ScanForm::kChunkwise, 20, 64, 128, 128), 20);
  EXPECT_EQ(chunk_length_for(ScanForm::kParallel, 50, 64, 128, 128), 50);
}

TEST(CpuRetention, EveryFormMatchesReference) {
  Problem x(2, 3, 100, 16, 24, true, 7);  // dk ≠ dv, T not a chunk multiple
  AttrMap attrs = {{"gammas", Attribute(std::vector<float>{0.9f, 0.99f, 0.5f})},
                   {"chunk_size", Attribute(int64_t{16})}};
  auto want = run_ok(x.inputs(), attrs, std::nullopt, true);
  for (ScanForm form :
       {ScanForm::kRecurrent, ScanForm::kParallel, ScanForm::kChunkwise}) {
    auto got = run_ok(x.inputs(), attrs, form);
    expect_close(got[0], want[0], 1e-5, scan_form_name(form));
    expect_close(got[1], want[1], 1e-5, scan_form_name(form));
  }
}

TEST(CpuRetention, ChunkSizeDoesNotChangeResults) {
  Problem x(1, 2, 300, 8, 8, false, 11);
  auto want = run_ok(x.inputs(), {}, ScanForm::kRecurrent);
  for (int64_t chunk : {1, 16, 64, 512}) {
    auto got = run_ok(x.inputs(), {{"chunk_size", Attribute(chunk)}},
                      ScanForm::kChunkwise);
    expect_close(got[0], want[0], 1e-5, "chunk " + std::to_string(chunk));
    expect_close(got[1], want[1], 1e-5, "state");
  }
}

TEST(CpuRetention, WholeEqualsTwoPartsWithState) {
  Problem x(1, 2, 150, 8, 12, true, 21);
  auto whole = run_ok(x.inputs(), {});
  auto first = run_ok({slice_axis(x.q, 2, 0, 70), slice_axis(x.k, 2, 0, 70),
                       slice_axis(x.v, 2, 0, 70), x.past},
                      {});
  auto second =
      run_ok({slice_axis(x.q, 2, 70, 150), slice_axis(x.k, 2, 70, 150),
              slice_axis(x.v, 2, 70, 150), first[1]},
             {});
  expect_close(concat_axis(first[0], second[0], 2), whole[0], 1e-5, "y");
  expect_close(second[1], whole[1], 1e-5, "state");
}

TEST(CpuRetention, PrefillThenStepsEqualsAllAtOnce) {
  const int64_t prefill = 64, steps = 6;
  Problem x(2, 2, prefill + steps, 8, 8, false, 31);
  auto whole = run_ok(x.inputs(), {});
  auto out =
      run_ok({slice_axis(x.q, 2, 0, prefill), slice_axis(x.k, 2, 0, prefill),
              slice_axis(x.v, 2, 0, prefill), Tensor()},
             {});
  Tensor y = out[0], state = out[1];
  for (int64_t t = prefill; t < prefill + steps; ++t) {
    auto step =
        run_ok({slice_axis(x.q, 2, t, t + 1), slice_axis(x.k, 2, t, t + 1),
                slice_axis(x.v, 2, t, t + 1), state},
               {});
    y = concat_axis(y, step[0], 2);
    state = step[1];
  }
  expect_close(y, whole[0], 1e-5, "y");
  expect_close(state, whole[1], 1e-5, "state");
}

// 16 heads with the default decays (up to 1 − 2⁻²⁰) over 65536 tokens:
// a γ^(−m) anywhere would overflow; every form must stay finite and agree
// with the fp64 recurrence.
TEST(CpuRetention, LongSequenceWithSlowDecaysStaysFinite) {
  Problem x(1, 16, 65536, 2, 3, false, 41);
  auto want = run_ok(x.inputs(), {}, std::nullopt, true);
  for (ScanForm form : {ScanForm::kChunkwise, ScanForm::kRecurrent}) {
    auto got = run_ok(x.inputs(), {}, form);
    expect_close(got[0], want[0], 1e-4, scan_form_name(form));
    expect_close(got[1], want[1], 1e-4, scan_form_name(form));
  }
}

TEST(CpuRetention, HalfPrecisionInputs) {
  Problem x(1, 2, 40, 8, 8, false, 51);
  std::vector<Tensor> half;
  for (const Tensor& t : {x.q, x.k, x.v}) {
    Tensor h = Tensor::allocate(DType::kF16, t.dims()).value();
    for (int64_t i = 0; i < t.num_elements(); ++i) {
      h.set_element_f64(i, t.element_f64(i));
    }
    half.push_back(h);
  }
  half.push_back(Tensor());
  auto want = run_ok(half, {}, std::nullopt, true);
  auto got = run_ok(half, {});
  EXPECT_EQ(got[0].dtype(), DType::kF16);
  expect_close(got[0], want[0], 2e-3, "y");
  expect_close(got[1], want[1], 2e-3, "state");
}

TEST(CpuRetention, RejectsWhatTheReferenceRejects) {
  Problem x(1, 2, 4, 4, 4, false, 61);
  auto got = run(x.inputs(), {{"gammas", Attribute(std::vector<float>{0.5f})}},
                 std::nullopt);
  ASSERT_FALSE(got.is_ok());
  EXPECT_NE(got.status().message().find("gammas must have one value per head"),
            std::string::npos);
}

}  // namespace
}  // namespace seqrt::cpu
