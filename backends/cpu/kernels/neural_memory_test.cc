#include "backends/cpu/kernels/neural_memory.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/kernel_table.h"
#include "ops/registry.h"

namespace seqrt::cpu {
namespace {

// Runs the CPU kernel (or the reference kernel) of one NeuralMemory node.
Result<std::vector<Tensor>> run_memory(const std::vector<Tensor>& inputs,
                                       const AttrMap& attrs, bool reference) {
  const OpSchema* schema =
      OpRegistry::global().find(kSeqrtDomain, "NeuralMemory");
  const CpuKernel* kernel = kernel_table().find(kSeqrtDomain, "NeuralMemory");
  if (schema == nullptr || kernel == nullptr) {
    return not_found("NeuralMemory is not registered");
  }
  Node node;
  node.name = "test";
  node.op = "NeuralMemory";
  node.domain = kSeqrtDomain;
  node.attrs = attrs;
  std::vector<const Tensor*> args;
  for (size_t i = 0; i < inputs.size(); ++i) {
    bool present = !inputs[i].empty();
    node.inputs.push_back(present ? static_cast<ValueId>(i) : kNoValue);
    args.push_back(present ? &inputs[i] : nullptr);
  }
  node.outputs = {100, 101};
  SEQRT_RETURN_IF_ERROR(check_node(node, *schema));
  KernelContext ctx(node, *schema, std::move(args));
  SEQRT_RETURN_IF_ERROR(reference ? schema->reference(ctx) : kernel->run(ctx));
  return std::move(ctx.outputs());
}

Tensor uniform(std::vector<int64_t> dims, uint64_t seed, double lo, double hi,
               DType dtype = DType::kF32) {
  Tensor tensor = Tensor::allocate(dtype, std::move(dims)).value();
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  for (int64_t i = 0; i < tensor.num_elements(); ++i) {
    tensor.set_element_f64(i, dist(rng));
  }
  return tensor;
}

struct Problem {
  int64_t batch = 1, heads = 2, seq = 40, d = 16, m = 64;
  int depth = 2;
  uint64_t seed = 1;
};

// q, k, v, theta, eta, alpha, W1, W2 with Titans-like scales: keys and
// queries of unit norm, small learning rates.
std::vector<Tensor> make_inputs(const Problem& p, DType dtype = DType::kF32) {
  double unit = 1.0 / std::sqrt(static_cast<double>(p.d));
  std::vector<int64_t> seq4 = {p.batch, p.heads, p.seq, p.d};
  std::vector<int64_t> seq3 = {p.batch, p.heads, p.seq};
  std::vector<Tensor> in = {
      uniform(seq4, p.seed, -2 * unit, 2 * unit, dtype),
      uniform(seq4, p.seed + 1, -2 * unit, 2 * unit, dtype),
      uniform(seq4, p.seed + 2, -1, 1, dtype),
      uniform(seq3, p.seed + 3, 0.0, 0.05, dtype),
      uniform(seq3, p.seed + 4, 0.5, 0.95, dtype),
      uniform(seq3, p.seed + 5, 0.0, 0.1, dtype),
      uniform({p.heads, p.d, p.m}, p.seed + 6, -unit, unit, dtype)};
  if (p.depth == 2) {
    double s2 = 1.0 / std::sqrt(static_cast<double>(p.m));
    in.push_back(uniform({p.heads, p.m, p.d}, p.seed + 7, -s2, s2, dtype));
  } else {
    in.push_back(Tensor());
  }
  return in;
}

void expect_close(const Tensor& got, const Tensor& want, double tol,
                  const std::string& what) {
  ASSERT_EQ(got.dims(), want.dims()) << what;
  double worst = 0, largest = 0;
  int64_t where = 0;
  for (int64_t i = 0; i < want.num_elements(); ++i) {
    double w = want.element_f64(i), g = got.element_f64(i);
    ASSERT_TRUE(std::isfinite(g)) << what << " element " << i;
    largest = std::max(largest, std::abs(w));
    double err = std::abs(g - w) / (1 + std::abs(w));
    if (err > worst) worst = err, where = i;
  }
  // A diverging memory would make any relative tolerance meaningless.
  EXPECT_LT(largest, 100.0) << what << ": the memory diverged";
  EXPECT_LE(worst, tol) << what << ": worst element " << where << " got "
                        << got.element_f64(where) << " want "
                        << want.element_f64(where);
}

void expect_cpu_equals_reference(const std::vector<Tensor>& in,
                                 const AttrMap& attrs, double tol,
                                 const std::string& what) {
  auto cpu = run_memory(in, attrs, false);
  auto ref = run_memory(in, attrs, true);
  ASSERT_TRUE(cpu.is_ok()) << cpu.status().to_string();
  ASSERT_TRUE(ref.is_ok()) << ref.status().to_string();
  expect_close((*cpu)[0], (*ref)[0], tol, what + " y");
  expect_close((*cpu)[1], (*ref)[1], tol, what + " state");
}

TEST(CpuNeuralMemory, EqualsReferenceOverSizesAndChunks) {
  for (int64_t d : {16, 64}) {
    for (int64_t factor : {1, 4}) {
      for (int64_t chunk : {1, 16, 64}) {
        Problem p;
        p.d = d;
        p.m = factor * d;
        p.seq = d == 64 && factor == 4 ? 40 : 70;  // 70: a partial chunk
        std::vector<Tensor> in = make_inputs(p);
        std::string what = "d " + std::to_string(d) + " m " +
                           std::to_string(p.m) + " chunk " +
                           std::to_string(chunk);
        expect_cpu_equals_reference(in, {{"chunk_size", chunk}}, 2e-4, what);
      }
    }
  }
}

TEST(CpuNeuralMemory, DepthOneSiluAndRetrieveBefore) {
  for (int depth : {1, 2}) {
    for (const char* activation : {"gelu", "silu"}) {
      for (const char* retrieve : {"after_update", "before_update"}) {
        Problem p;
        p.depth = depth;
        p.m = depth == 1 ? p.d : 32;
        p.seq = 37;
        std::vector<Tensor> in = make_inputs(p);
        for (int64_t chunk : {1, 8}) {
          AttrMap attrs = {{"depth", depth},
                           {"activation", activation},
                           {"retrieve", retrieve},
                           {"chunk_size", chunk}};
          expect_cpu_equals_reference(in, attrs, 2e-4,
                                      std::string(activation) + " " + retrieve +
                                          " depth " + std::to_string(depth) +
                                          " chunk " + std::to_string(chunk));
        }
      }
    }
  }
}

// Tokens [begin, end) of a (B,H,T[,d]) input.
Tensor slice(const Tensor& x, int64_t begin, int64_t end) {
  std::vector<int64_t> dims = x.dims();
  int64_t inner = x.rank() == 4 ? dims[3] : 1, seq = dims[2];
  dims[2] = end - begin;
  Tensor out = Tensor::allocate(x.dtype(), dims).value();
  int64_t o = 0;
  for (int64_t r = 0; r < dims[0] * dims[1]; ++r) {
    for (int64_t i = (r * seq + begin) * inner; i < (r * seq + end) * inner;
         ++i) {
      out.set_element_f64(o++, x.element_f64(i));
    }
  }
  return out;
}

TEST(CpuNeuralMemory, ContinuesFromPastStateMidChunk) {
  Problem p;
  p.batch = 2;
  p.seq = 50;
  std::vector<Tensor> whole = make_inputs(p);
  AttrMap attrs = {{"chunk_size", 16}};
  auto full = run_memory(whole, attrs, false);
  ASSERT_TRUE(full.is_ok()) << full.status().to_string();
  for (int64_t split : {1, 16, 23, 49}) {
    std::vector<Tensor> a = whole, b = whole;
    for (size_t i = 0; i < 6; ++i) {
      a[i] = slice(whole[i], 0, split);
      b[i] = slice(whole[i], split, p.seq);
    }
    auto first = run_memory(a, attrs, false);
    ASSERT_TRUE(first.is_ok()) << first.status().to_string();
    b.push_back((*first)[1]);
    b.push_back(Tensor::from_vector<int64_t>({2}, {split, split}));
    auto second = run_memory(b, attrs, false);
    ASSERT_TRUE(second.is_ok()) << second.status().to_string();
    expect_close((*second)[0], slice((*full)[0], split, p.seq), 1e-4,
                 "split " + std::to_string(split));
    expect_close((*second)[1], (*full)[1], 1e-4, "state");
    // The continuation also matches the reference from the same state.
    expect_cpu_equals_reference(b, attrs, 2e-4, "continued");
  }
}

// chunk_size 1 runs the token step, whose update passes also compute the
// next token's forward: a prefill then single-token decode steps, each from
// the previous present_state, give the whole run's outputs and state.
TEST(CpuNeuralMemory, TokenStepPrefillThenDecodeEqualsWhole) {
  for (int depth : {1, 2}) {
    for (const char* retrieve : {"after_update", "before_update"}) {
      Problem p;
      p.depth = depth;
      p.m = depth == 1 ? p.d : 64;
      p.seq = 24;
      std::vector<Tensor> whole = make_inputs(p);
      AttrMap attrs = {{"depth", depth}, {"retrieve", retrieve}};
      std::string what =
          std::string(retrieve) + " depth " + std::to_string(depth);
      auto full = run_memory(whole, attrs, false);
      ASSERT_TRUE(full.is_ok()) << full.status().to_string();
      expect_cpu_equals_reference(whole, attrs, 2e-4, what);
      const int64_t prefill = 20;
      Tensor state;
      for (int64_t begin = 0; begin < p.seq;) {
        int64_t end = begin == 0 ? prefill : begin + 1;
        std::vector<Tensor> part = whole;
        for (size_t i = 0; i < 6; ++i) part[i] = slice(whole[i], begin, end);
        if (begin > 0) {
          part.push_back(state);
          part.push_back(Tensor::from_vector<int64_t>({1}, {begin}));
        }
        auto out = run_memory(part, attrs, false);
        ASSERT_TRUE(out.is_ok()) << out.status().to_string();
        expect_close((*out)[0], slice((*full)[0], begin, end), 1e-5,
                     what + " tokens from " + std::to_string(begin));
        state = (*out)[1];
        begin = end;
      }
      expect_close(state, (*full)[1], 1e-5, what + " state");
    }
  }
}

// Widths that are not a multiple of the vector length take the kernels'
// narrower column blocks and scalar tails.
TEST(CpuNeuralMemory, OddWidthsEqualReference) {
  for (int depth : {1, 2}) {
    Problem p;
    p.depth = depth;
    p.d = depth == 1 ? 13 : 11;
    p.m = depth == 1 ? p.d : 27;
    p.seq = 21;
    std::vector<Tensor> in = make_inputs(p);
    for (int64_t chunk : {1, 8}) {
      expect_cpu_equals_reference(in, {{"depth", depth}, {"chunk_size", chunk}},
                                  2e-4,
                                  "odd widths depth " + std::to_string(depth) +
                                      " chunk " + std::to_string(chunk));
    }
  }
}

TEST(CpuNeuralMemory, ChunkedEqualsTokenStep) {
  Problem p;
  p.heads = 1;
  p.seq = 100;
  p.d = 32;
  p.m = 128;
  std::vector<Tensor> in = make_inputs(p);
  for (int64_t chunk : {4, 16, 64}) {
    NeuralMemoryDims n;
    n.batch = 1;
    n.heads = 1;
    n.seq = p.seq;
    n.d = p.d;
    n.m = p.m;
    n.chunk = chunk;
    std::vector<float> state_a(3 * n.params()), state_b(3 * n.params());
    neural_memory_initial_state(n, in[6].data_as<float>(),
                                in[7].data_as<float>(), state_a.data());
    state_b = state_a;
    std::vector<float> y_a(p.seq * p.d), y_b(p.seq * p.d);
    NeuralMemoryHead head;
    head.q = in[0].data_as<float>();
    head.k = in[1].data_as<float>();
    head.v = in[2].data_as<float>();
    head.theta = in[3].data_as<float>();
    head.eta = in[4].data_as<float>();
    head.alpha = in[5].data_as<float>();
    head.position = 3;
    head.y = y_a.data();
    head.state = state_a.data();
    NeuralMemoryScratch scratch(n);
    neural_memory_head_chunked(n, head, scratch);
    head.y = y_b.data();
    head.state = state_b.data();
    neural_memory_head_token_step(n, head);
    for (size_t i = 0; i < y_a.size(); ++i) {
      ASSERT_LT(std::abs(y_b[i]), 100.0f) << "the memory diverged";
      ASSERT_NEAR(y_a[i], y_b[i], 1e-4 * (1 + std::abs(y_b[i]))) << i;
    }
    for (size_t i = 0; i < state_a.size(); ++i) {
      ASSERT_NEAR(state_a[i], state_b[i], 1e-4 * (1 + std::abs(state_b[i])))
          << i;
    }
  }
}

TEST(CpuNeuralMemory, HalfInputsAndErrors) {
  Problem p;
  p.seq = 20;
  std::vector<Tensor> in = make_inputs(p, DType::kF16);
  auto cpu = run_memory(in, {{"chunk_size", 8}}, false);
  ASSERT_TRUE(cpu.is_ok()) << cpu.status().to_string();
  EXPECT_EQ((*cpu)[0].dtype(), DType::kF16);
  EXPECT_EQ((*cpu)[1].dtype(), DType::kF32);
  expect_cpu_equals_reference(in, {{"chunk_size", 8}}, 2e-3, "f16");

  std::vector<Tensor> bad = make_inputs(p);
  bad[7] = Tensor();
  auto status = run_memory(bad, {}, false).status();
  ASSERT_FALSE(status.is_ok());
  EXPECT_NE(status.message().find("[NeuralMemory] node 'test'"),
            std::string::npos);
  EXPECT_NE(status.message().find("depth 2 needs input 'W2'"),
            std::string::npos);
  bad = make_inputs(p);
  bad.push_back(uniform({1, 2, 5}, 1, 0, 1));
  status = run_memory(bad, {}, false).status();
  EXPECT_NE(status.message().find("past_state"), std::string::npos)
      << status.message();
}

}  // namespace
}  // namespace seqrt::cpu
