// The recurrent kernels against the reference where a step splits into
// several hidden-unit blocks (forced with more threads than this machine
// may have), and with outputs left off.
#include <gtest/gtest.h>

#include <random>

#include "backends/cpu/kernels/kernel_test_util.h"
#include "backends/cpu/parallel.h"

namespace seqrt::cpu {
namespace {

using kernel_testing::expect_matches_reference;

Tensor uniform(std::vector<int64_t> dims, unsigned seed, float scale = 0.4f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-scale, scale);
  Tensor t = Tensor::allocate(DType::kF32, std::move(dims)).value();
  float* data = t.mutable_data_as<float>();
  for (int64_t i = 0; i < t.num_elements(); ++i) data[i] = dist(gen);
  return t;
}

std::vector<Tensor> inputs(const std::string& op, int64_t dirs, int64_t hidden,
                           std::vector<int32_t> lens) {
  const int64_t gates = op == "LSTM" ? 4 : (op == "GRU" ? 3 : 1);
  const int64_t seq = 6, batch = static_cast<int64_t>(lens.size()), in = 5;
  std::vector<Tensor> v = {uniform({seq, batch, in}, 1, 1.0f),
                           uniform({dirs, gates * hidden, in}, 2),
                           uniform({dirs, gates * hidden, hidden}, 3),
                           uniform({dirs, 2 * gates * hidden}, 4),
                           Tensor::from_vector<int32_t>({batch}, lens),
                           uniform({dirs, batch, hidden}, 5, 1.0f)};
  if (op == "LSTM") {
    v.push_back(uniform({dirs, batch, hidden}, 6, 1.0f));
    v.push_back(uniform({dirs, 3 * hidden}, 7));
  }
  return v;
}

TEST(RecurrentKernels, BlocksAcrossThreadsMatchTheReference) {
  set_threads_for_this_thread(8);  // 200 units: 4 blocks of 50 per direction
  for (const char* op : {"RNN", "GRU", "LSTM"}) {
    SCOPED_TRACE(op);
    const size_t outputs = std::string(op) == "LSTM" ? 3 : 2;
    for (int lbr : {0, 1}) {
      AttrMap attrs = {{"direction", "bidirectional"}, {"clip", 2.0f}};
      if (std::string(op) == "GRU") attrs["linear_before_reset"] = lbr;
      if (std::string(op) == "LSTM") attrs["input_forget"] = lbr;
      expect_matches_reference(kOnnxDomain, op, inputs(op, 2, 200, {6, 3, 0}),
                               attrs, 1e-4, outputs);
    }
  }
  set_threads_for_this_thread(0);
}

TEST(RecurrentKernels, WithoutTheCellStateOutput) {
  auto all =
      kernel_testing::run_cpu("LSTM", inputs("LSTM", 1, 9, {6, 2}), {}, 3);
  auto state =
      kernel_testing::run_cpu("LSTM", inputs("LSTM", 1, 9, {6, 2}), {}, 2);
  ASSERT_TRUE(all.is_ok() && state.is_ok()) << state.status().to_string();
  ASSERT_EQ(state->size(), 2u);
  kernel_testing::expect_close((*state)[1], (*all)[1], 0);
}

TEST(RecurrentKernels, EmptySequenceAndBatch) {
  const std::vector<int64_t> shapes[] = {{0, 2, 5}, {4, 0, 5}};
  for (const std::vector<int64_t>& x_dims : shapes) {
    std::vector<Tensor> in = {uniform(x_dims, 1), uniform({1, 12, 5}, 2),
                              uniform({1, 12, 4}, 3), uniform({1, 24}, 4)};
    expect_matches_reference(kOnnxDomain, "GRU", in, {}, 0, 2);
    auto out = kernel_testing::run_cpu("GRU", in, {}, 2);
    ASSERT_TRUE(out.is_ok()) << out.status().to_string();
    EXPECT_EQ((*out)[0].dims(),
              (std::vector<int64_t>{x_dims[0], 1, x_dims[1], 4}));
  }
}

TEST(RecurrentKernels, F64RunsTheReferenceExactly) {
  std::vector<Tensor> in = inputs("GRU", 1, 7, {6, 4});
  for (Tensor& t : in) {
    if (t.dtype() != DType::kF32) continue;
    Tensor d = Tensor::allocate(DType::kF64, t.dims()).value();
    for (int64_t i = 0; i < t.num_elements(); ++i)
      d.set_element_f64(i, t.element_f64(i));
    t = d;
  }
  expect_matches_reference(kOnnxDomain, "GRU", in, {}, 0, 2);
}

}  // namespace
}  // namespace seqrt::cpu
