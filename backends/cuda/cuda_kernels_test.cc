// The CUDA kernels against the reference backend on a GPU: whole sequence
// vs the same sequence cut in two with the state carried (SelectiveScan),
// prefill vs prefill + decode steps (Attention), RungeKutta's every method
// (its body on the CUDA kernels), and out-of-memory as one clear error. Skipped
// with the reason where no CUDA device exists.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "graph/builder.h"
#include "runtime/backend_registry.h"
#include "testing/random_tensor.h"
#include "tests/device_skip.h"

namespace seqrt {
namespace {

#define SKIP_WITHOUT_CUDA(backend) SEQRT_CREATE_BACKEND_OR_SKIP(backend, "cuda")

Result<std::vector<Tensor>> run_on(Backend& backend, const Graph& graph,
                                   std::vector<Tensor> inputs) {
  SEQRT_ASSIGN_OR_RETURN(auto executable,
                         backend.compile(graph, CompileOptions{}));
  return executable->run(std::move(inputs));
}

void expect_close(const Tensor& got, const Tensor& want, double tolerance) {
  ASSERT_EQ(got.dims(), want.dims());
  int reported = 0;
  for (int64_t i = 0; i < want.num_elements() && reported < 5; ++i) {
    double w = want.element_f64(i);
    double g = got.element_f64(i);
    if (!(std::abs(g - w) <= tolerance * (1 + std::abs(w)))) {
      ADD_FAILURE() << "element " << i << ": got " << g << ", want " << w;
      ++reported;
    }
  }
}

// SelectiveScan over L steps with D channels, N states, G = 1, every
// optional input given, past state an input and present state an output.
Graph scan_graph(int64_t d, int64_t n, int64_t l) {
  GraphBuilder b("scan");
  ValueId u = b.input("u", DType::kF32, {1, d, l});
  ValueId delta = b.input("delta", DType::kF32, {1, d, l});
  ValueId a = b.input("A", DType::kF32, {d, n});
  ValueId bm = b.input("Bm", DType::kF32, {1, 1, n, l});
  ValueId cm = b.input("Cm", DType::kF32, {1, 1, n, l});
  ValueId skip = b.input("Dskip", DType::kF32, {d});
  ValueId z = b.input("z", DType::kF32, {1, d, l});
  ValueId bias = b.input("delta_bias", DType::kF32, {d});
  ValueId past = b.input("past_state", DType::kF32, {1, d, n});
  NodeOptions options;
  options.domain = kSeqrtDomain;
  std::vector<ValueId> out =
      b.add_node("SelectiveScan", {u, delta, a, bm, cm, skip, z, bias, past},
                 {}, 2, options);
  b.output(out[0], "y");
  b.output(out[1], "present_state");
  Result<Graph> graph = std::move(b).build();
  EXPECT_TRUE(graph.is_ok()) << graph.status().to_string();
  return std::move(graph).value();
}

// The time slice [from, to) of a (..., L) tensor.
Tensor time_slice(const Tensor& x, int64_t from, int64_t to) {
  std::vector<int64_t> dims = x.dims();
  int64_t length = dims.back();
  int64_t rows = x.num_elements() / length;
  dims.back() = to - from;
  Tensor out = Tensor::allocate(DType::kF32, dims).value();
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t t = from; t < to; ++t) {
      out.mutable_data_as<float>()[r * (to - from) + t - from] =
          x.data_as<float>()[r * length + t];
    }
  }
  return out;
}

TEST(CudaKernels, SelectiveScanMatchesReferenceWholeAndInParts) {
  SKIP_WITHOUT_CUDA(cuda);
  const int64_t d = 48, n = 16, l = 300, cut = 137;
  Tensor u = random_uniform_f32({1, d, l}, 1, -1, 1);
  Tensor delta = random_uniform_f32({1, d, l}, 2, -2, 1);
  Tensor a = random_uniform_f32({d, n}, 3, -2, -0.1f);
  Tensor bm = random_uniform_f32({1, 1, n, l}, 4, -1, 1);
  Tensor cm = random_uniform_f32({1, 1, n, l}, 5, -1, 1);
  Tensor skip = random_uniform_f32({d}, 6, -1, 1);
  Tensor z = random_uniform_f32({1, d, l}, 7, -1, 1);
  Tensor bias = random_uniform_f32({d}, 8, -0.5f, 0.5f);
  Tensor zero_state = Tensor::allocate(DType::kF32, {1, d, n}).value();
  auto reference = create_backend("reference");
  ASSERT_TRUE(reference.is_ok());
  Graph whole = scan_graph(d, n, l);
  auto want = run_on(**reference, whole,
                     {u, delta, a, bm, cm, skip, z, bias, zero_state});
  auto got =
      run_on(**cuda, whole, {u, delta, a, bm, cm, skip, z, bias, zero_state});
  ASSERT_TRUE(want.is_ok()) << want.status().to_string();
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  expect_close((*got)[0], (*want)[0], 1e-4);
  expect_close((*got)[1], (*want)[1], 1e-4);
  // Cut in two with the state carried: the same y and final state.
  auto part = [&](int64_t from, int64_t to, const Tensor& state) {
    return run_on(**cuda, scan_graph(d, n, to - from),
                  {time_slice(u, from, to), time_slice(delta, from, to), a,
                   time_slice(bm, from, to), time_slice(cm, from, to), skip,
                   time_slice(z, from, to), bias, state});
  };
  auto first = part(0, cut, zero_state);
  ASSERT_TRUE(first.is_ok()) << first.status().to_string();
  auto second = part(cut, l, (*first)[1]);
  ASSERT_TRUE(second.is_ok()) << second.status().to_string();
  expect_close((*first)[0], time_slice((*want)[0], 0, cut), 1e-4);
  expect_close((*second)[0], time_slice((*want)[0], cut, l), 1e-4);
  expect_close((*second)[1], (*want)[1], 1e-4);
}

// Causal GQA attention with a KV cache: prefill T tokens, then one step.
Graph attention_graph(int64_t tq, int64_t tp, bool sigmoid) {
  GraphBuilder b("attention");
  const int64_t hq = 4, hkv = 2, d = 64;
  ValueId q = b.input("Q", DType::kF32, {1, hq, tq, d});
  ValueId k = b.input("K", DType::kF32, {1, hkv, tq, d});
  ValueId v = b.input("V", DType::kF32, {1, hkv, tq, d});
  std::vector<ValueId> inputs = {q, k, v};
  if (tp > 0) {
    inputs.push_back(kNoValue);
    inputs.push_back(b.input("past_key", DType::kF32, {1, hkv, tp, d}));
    inputs.push_back(b.input("past_value", DType::kF32, {1, hkv, tp, d}));
  }
  NodeOptions options;
  options.domain = kSeqrtDomain;
  AttrMap attrs;
  attrs["is_causal"] = Attribute(int64_t{1});
  if (sigmoid) attrs["score"] = Attribute(std::string("sigmoid"));
  std::vector<ValueId> out = b.add_node("Attention", inputs, attrs, 3, options);
  b.output(out[0], "Y");
  b.output(out[1], "present_key");
  b.output(out[2], "present_value");
  Result<Graph> graph = std::move(b).build();
  EXPECT_TRUE(graph.is_ok()) << graph.status().to_string();
  return std::move(graph).value();
}

TEST(CudaKernels, AttentionPrefillThenStepMatchesReference) {
  SKIP_WITHOUT_CUDA(cuda);
  auto reference = create_backend("reference");
  ASSERT_TRUE(reference.is_ok());
  for (bool sigmoid : {false, true}) {
    Graph prefill = attention_graph(100, 0, sigmoid);
    std::vector<Tensor> inputs = {
        random_uniform_f32({1, 4, 100, 64}, 11, -1, 1),
        random_uniform_f32({1, 2, 100, 64}, 12, -1, 1),
        random_uniform_f32({1, 2, 100, 64}, 13, -1, 1)};
    auto want = run_on(**reference, prefill, inputs);
    auto got = run_on(**cuda, prefill, inputs);
    ASSERT_TRUE(want.is_ok()) << want.status().to_string();
    ASSERT_TRUE(got.is_ok()) << got.status().to_string();
    for (size_t i = 0; i < 3; ++i) expect_close((*got)[i], (*want)[i], 1e-4);
    Graph step = attention_graph(1, 100, sigmoid);
    std::vector<Tensor> step_inputs = {
        random_uniform_f32({1, 4, 1, 64}, 14, -1, 1),
        random_uniform_f32({1, 2, 1, 64}, 15, -1, 1),
        random_uniform_f32({1, 2, 1, 64}, 16, -1, 1), (*got)[1], (*got)[2]};
    auto want_step = run_on(**reference, step, step_inputs);
    auto got_step = run_on(**cuda, step, step_inputs);
    ASSERT_TRUE(want_step.is_ok()) << want_step.status().to_string();
    ASSERT_TRUE(got_step.is_ok()) << got_step.status().to_string();
    for (size_t i = 0; i < 3; ++i) {
      expect_close((*got_step)[i], (*want_step)[i], 1e-4);
    }
  }
}

TEST(CudaKernels, OutOfMemoryIsOneClearError) {
  // Read once, at the first device allocation of this test process.
  setenv("SEQRT_CUDA_FAULT", "oom", 1);
  SKIP_WITHOUT_CUDA(cuda);
  // The run's node arena is the first device memory asked for.
  GraphBuilder b("oom");
  ValueId x = b.input("x", DType::kF32, Shape{256, 256});
  b.output(b.add("Tanh", {x}), "y");
  Graph graph = std::move(b).build().value();
  Result<std::vector<Tensor>> ran =
      run_on(**cuda, graph, {random_uniform_f32({256, 256}, 1)});
  ASSERT_FALSE(ran.is_ok());
  EXPECT_EQ(ran.status().code(), StatusCode::kOutOfMemory);
  EXPECT_NE(ran.status().message().find("out of device memory"),
            std::string::npos)
      << ran.status().message();
  unsetenv("SEQRT_CUDA_FAULT");
}

// F(y) = ½·tanh(y·w), w an outer value the body captures.
std::shared_ptr<Graph> rk_body(const Shape& shape, int64_t width) {
  GraphBuilder b("body");
  ValueId y = b.input("y", DType::kF32, shape);
  ValueId w = b.capture("w", DType::kF32, Shape{Dim(width), Dim(width)});
  ValueId half = b.constant("half", Tensor::scalar<float>(0.5f));
  b.output(b.add("Mul", {b.add("Tanh", {b.add("MatMul", {y, w})}), half}), "f");
  Result<Graph> graph = std::move(b).build();
  EXPECT_TRUE(graph.is_ok()) << graph.status().to_string();
  return std::make_shared<Graph>(std::move(graph).value());
}

Graph rk_graph(const std::string& method, int64_t rows, int64_t width) {
  const Shape shape{Dim(3), Dim(rows), Dim(width)};
  GraphBuilder b("rk");
  std::vector<ValueId> inputs = {b.input("y", DType::kF32, shape)};
  b.input("w", DType::kF32, Shape{Dim(width), Dim(width)});
  if (method == "rk2_gated") {
    inputs.push_back(b.input("gate_weight", DType::kF32, Shape{2 * width}));
    inputs.push_back(b.input("gate_bias", DType::kF32, Shape{1}));
  }
  NodeOptions options;
  options.domain = kSeqrtDomain;
  b.output(b.add_node("RungeKutta", inputs,
                      {{"body", Attribute(rk_body(shape, width))},
                       {"method", Attribute(method)}},
                      1, options)[0],
           "y_next");
  Result<Graph> graph = std::move(b).build();
  EXPECT_TRUE(graph.is_ok()) << graph.status().to_string();
  return std::move(graph).value();
}

// Every method: the body's nodes on their CUDA kernels, the stage
// combinations fused, against the reference. Width 40 crosses a warp in
// the gate's row sums.
TEST(CudaKernels, RungeKuttaEveryMethodMatchesReference) {
  SKIP_WITHOUT_CUDA(cuda);
  auto reference = create_backend("reference");
  ASSERT_TRUE(reference.is_ok());
  const int64_t rows = 7, width = 40;
  for (const char* method : {"euler", "rk2", "rk2_gated", "rk4"}) {
    SCOPED_TRACE(method);
    Graph graph = rk_graph(method, rows, width);
    std::vector<Tensor> inputs = {
        random_uniform_f32({3, rows, width}, 90, -1, 1),
        random_uniform_f32({width, width}, 91, -0.3f, 0.3f)};
    if (std::string(method) == "rk2_gated") {
      inputs.push_back(random_uniform_f32({2 * width}, 92, -0.5f, 0.5f));
      inputs.push_back(random_uniform_f32({1}, 93, -0.5f, 0.5f));
    }
    auto want = run_on(**reference, graph, inputs);
    ASSERT_TRUE(want.is_ok()) << want.status().to_string();
    auto got = run_on(**cuda, graph, inputs);
    ASSERT_TRUE(got.is_ok()) << got.status().to_string();
    expect_close((*got)[0], (*want)[0], 1e-5);
  }
}

}  // namespace
}  // namespace seqrt
