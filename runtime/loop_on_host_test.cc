// A run-time Loop on `vulkan,cpu` (runtime/loop_on_host.h): the host counts
// the iterations, the body's matmul runs on Vulkan, and the results equal
// the CPU's: carried value, stacked scan output, zero trips, a body
// condition that ends the loop early, and the iteration limit.
#include "runtime/loop_on_host.h"

#include <gtest/gtest.h>

#include "graph/builder.h"
#include "runtime/session.h"
#include "tests/device_skip.h"

namespace seqrt {
namespace {

// Loop(M = n, cond = c, v = x): v' = Tanh(v·w), the body's condition stays
// true while v'[0,0] < stop; scan output v'. w is a constant of the outer
// graph that the body captures.
Graph runtime_loop_graph(float stop) {
  GraphBuilder g("body");
  g.input("iter", DType::kI64, Shape{});
  ValueId cond_in = g.input("cond_in", DType::kBool, Shape{});
  ValueId v = g.input("v", DType::kF32, Shape{2, 8});
  ValueId w = g.capture("w", DType::kF32, Shape{8, 8});
  ValueId next = g.add("Tanh", {g.add("MatMul", {v, w})});
  ValueId first =
      g.add("Slice",
            {next, g.constant("s0", Tensor::from_vector<int64_t>({2}, {0, 0})),
             g.constant("s1", Tensor::from_vector<int64_t>({2}, {1, 1}))});
  ValueId below = g.add(
      "Less",
      {g.add("Reshape", {first, g.constant("one", Tensor::from_vector<int64_t>(
                                                      {1}, {1}))}),
       g.constant("stop", Tensor::from_vector<float>({1}, {stop}))});
  ValueId cond_out = g.add(
      "And",
      {cond_in,
       g.add("Squeeze", {below, g.constant("ax", Tensor::from_vector<int64_t>(
                                                     {1}, {0}))})});
  g.output(cond_out, "cond_out");
  g.output(next, "v_out");
  g.output(g.add("Identity", {next}), "scan");
  auto body = std::make_shared<Graph>(std::move(g).build().value());

  GraphBuilder b("runtime_loop");
  ValueId x = b.input("x", DType::kF32, Shape{2, 8});
  ValueId n = b.input("n", DType::kI64, Shape{});
  ValueId c = b.input("c", DType::kBool, Shape{});
  std::vector<float> weights(64);
  for (size_t i = 0; i < weights.size(); ++i) {
    weights[i] = 0.05f * float(i % 7) - 0.1f;
  }
  b.constant("w", Tensor::from_vector<float>({8, 8}, weights));
  auto out = b.add_node("Loop", {n, c, x}, {{"body", body}}, 2);
  b.output(out[0], "v_final");
  b.output(out[1], "steps");
  Result<Graph> graph = std::move(b).build();
  EXPECT_TRUE(graph.is_ok()) << graph.status().to_string();
  return std::move(graph).value();
}

std::unique_ptr<Session> open(const std::string& backend, float stop,
                              Limits limits = {}) {
  SessionOptions options;
  options.backend = backend;
  options.limits = limits;
  Result<std::unique_ptr<Session>> s =
      Session::create(runtime_loop_graph(stop), options);
  EXPECT_TRUE(s.is_ok()) << s.status().to_string();
  return s.is_ok() ? std::move(s).value() : nullptr;
}

std::map<std::string, Tensor> feeds(int64_t trips, bool cond = true) {
  std::vector<float> x(16);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.1f * float(i) - 0.5f;
  return {{"x", Tensor::from_vector<float>({2, 8}, x)},
          {"n", Tensor::scalar<int64_t>(trips)},
          {"c", Tensor::scalar<bool>(cond)}};
}

void expect_same_outputs(Session& got_session, Session& want_session,
                         const std::map<std::string, Tensor>& in) {
  Result<std::map<std::string, Tensor>> got = got_session.run(in);
  Result<std::map<std::string, Tensor>> want = want_session.run(in);
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  ASSERT_TRUE(want.is_ok()) << want.status().to_string();
  for (const char* name : {"v_final", "steps"}) {
    const Tensor& a = got->at(name);
    const Tensor& b = want->at(name);
    ASSERT_EQ(a.dims(), b.dims()) << name;
    for (int64_t i = 0; i < a.num_elements(); ++i) {
      EXPECT_NEAR(a.element_f64(i), b.element_f64(i), 1e-5) << name << i;
    }
  }
}

class LoopOnHost : public ::testing::Test {
 protected:
  void SetUp() override { SEQRT_CREATE_BACKEND_OR_SKIP(vulkan, "vulkan"); }
};

TEST_F(LoopOnHost, TheBodyRunsOnVulkanAndMatchesTheCpu) {
  auto mixed = open("vulkan,cpu", 10.0f);
  auto cpu = open("cpu", 10.0f);
  ASSERT_TRUE(mixed && cpu);
  for (int64_t trips : {0, 1, 5}) {
    SCOPED_TRACE(trips);
    expect_same_outputs(*mixed, *cpu, feeds(trips));
  }
  expect_same_outputs(*mixed, *cpu, feeds(4, false));  // never enters
  const std::string report = mixed->placement_report({});
  EXPECT_NE(report.find("its Loop runs on the host, the body partitioned "
                        "again"),
            std::string::npos)
      << report;
  // After a run, the body's own placement: all of it one Vulkan segment,
  // the captured weight among its constants.
  EXPECT_NE(report.find("body: 1 segment(s) on [vulkan, cpu]"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("segment 0 on vulkan: 8 node(s)"), std::string::npos)
      << report;
}

TEST_F(LoopOnHost, TheBodysConditionEndsItEarly) {
  // v'[0,0] stays far below 10 and rises above -10: a stop of -10 ends
  // the loop after its first iteration whatever M says.
  auto mixed = open("vulkan,cpu", -10.0f);
  auto cpu = open("cpu", -10.0f);
  ASSERT_TRUE(mixed && cpu);
  expect_same_outputs(*mixed, *cpu, feeds(50));
  Result<std::map<std::string, Tensor>> got = mixed->run(feeds(50));
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  EXPECT_EQ(got->at("steps").dims(), (std::vector<int64_t>{1, 2, 8}));
}

TEST_F(LoopOnHost, ItsIterationsAreBoundedAndItsInputsChecked) {
  Limits limits;
  limits.max_loop_iterations = 3;
  auto mixed = open("vulkan,cpu", 10.0f, limits);
  ASSERT_TRUE(mixed);
  EXPECT_TRUE(mixed->run(feeds(3)).is_ok());
  Result<std::map<std::string, Tensor>> over = mixed->run(feeds(4));
  ASSERT_FALSE(over.is_ok());
  EXPECT_NE(over.status().message().find("max_loop_iterations"),
            std::string::npos)
      << over.status().message();
  Result<std::map<std::string, Tensor>> negative = mixed->run(feeds(-1));
  ASSERT_FALSE(negative.is_ok());
  EXPECT_NE(negative.status().message().find("M must be >= 0"),
            std::string::npos)
      << negative.status().message();
}

}  // namespace
}  // namespace seqrt
