// Failure paths and limits through Session and Stream: an injected host
// allocation failure at every allocation of a run is a kOutOfMemory error,
// never a crash, and leaves the Session and others working; a node the backend
// lacks is an error naming it; the memory budget and the graph limits fail
// naming the limit and how to raise it.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "compiler/infer/infer_graph.h"
#include "graph/alloc_fault.h"
#include "graph/builder.h"
#include "runtime/backend_registry.h"
#include "runtime/session.h"
#include "runtime/stream.h"

namespace seqrt {
namespace {

constexpr int64_t kDim = 8;

// y = Relu(x W) + x, with state past -> present = past + x: a weight, a
// symbolic length and a state pair.
Graph small_graph() {
  GraphBuilder b("small");
  ValueId x = b.input("x", DType::kF32, {Dim::symbol("seq"), kDim});
  ValueId past = b.input("past", DType::kF32, {Dim::symbol("seq"), kDim});
  std::vector<float> w(kDim * kDim);
  for (size_t i = 0; i < w.size(); ++i) w[i] = std::cos(0.1f * i);
  ValueId weight = b.constant("w", Tensor::from_vector<float>({kDim, kDim}, w));
  ValueId h = b.add("Relu", {b.add("MatMul", {x, weight})});
  b.output(b.add("Add", {h, x}), "y");
  NodeOptions present_options;
  present_options.output_names = {"present"};
  ValueId present = b.add("Add", {past, x}, {}, present_options);
  b.output(present);
  b.state_pair(past, present);
  Result<Graph> graph = std::move(b).build();
  EXPECT_TRUE(graph.is_ok()) << graph.status().to_string();
  return graph.is_ok() ? std::move(graph).value() : Graph();
}

Tensor x_tensor(int64_t seq) {
  std::vector<float> values(seq * kDim);
  for (size_t i = 0; i < values.size(); ++i) values[i] = std::sin(0.3f * i);
  return Tensor::from_vector<float>({seq, kDim}, values);
}

std::unique_ptr<Session> make_session(const std::string& backend,
                                      Limits limits = {}) {
  SessionOptions options;
  options.backend = backend;
  options.compile.num_threads = 1;
  options.limits = limits;
  Result<std::unique_ptr<Session>> session =
      Session::create(small_graph(), options);
  EXPECT_TRUE(session.is_ok()) << session.status().to_string();
  return session.is_ok() ? std::move(session).value() : nullptr;
}

bool same_bytes(const Tensor& a, const Tensor& b) { return a.same_as(b); }

std::vector<std::string> host_backends() {
  std::vector<std::string> names;
  for (const std::string& name : compiled_backends()) {
    if (name == "reference" || name == "cpu") names.push_back(name);
  }
  return names;
}

class FailurePaths : public ::testing::TestWithParam<std::string> {
 protected:
  void TearDown() override { fail_host_allocation(0); }
};

// Fails each host allocation of a run in turn, until a run needs fewer.
TEST_P(FailurePaths, EveryFailedAllocationOfARunIsAnOutOfMemoryError) {
  std::unique_ptr<Session> session = make_session(GetParam());
  std::unique_ptr<Session> other = make_session(GetParam());
  ASSERT_NE(session, nullptr);
  ASSERT_NE(other, nullptr);
  Result<std::map<std::string, Tensor>> expected =
      session->run({{"x", x_tensor(3)}});
  ASSERT_TRUE(expected.is_ok()) << expected.status().to_string();

  // Past the run's last allocation every run succeeds; a failed arena
  // allocation is not an error either (the CPU backend then allocates each
  // tensor), so successes may come between failures.
  int failures = 0;
  for (int nth = 1; nth <= 40; ++nth) {
    Tensor x = x_tensor(3);  // made before the hook is armed
    fail_host_allocation(nth);
    Result<std::map<std::string, Tensor>> out = session->run({{"x", x}});
    fail_host_allocation(0);
    if (out.is_ok()) {
      EXPECT_TRUE(same_bytes(out->at("y"), expected->at("y")));
      continue;
    }
    ++failures;
    EXPECT_EQ(out.status().code(), StatusCode::kOutOfMemory)
        << "allocation " << nth << ": " << out.status().to_string();
    // Both sessions still work, with the same results.
    Result<std::map<std::string, Tensor>> again =
        session->run({{"x", x_tensor(3)}});
    ASSERT_TRUE(again.is_ok()) << again.status().to_string();
    EXPECT_TRUE(same_bytes(again->at("y"), expected->at("y")));
    Result<std::map<std::string, Tensor>> beside =
        other->run({{"x", x_tensor(3)}});
    ASSERT_TRUE(beside.is_ok()) << beside.status().to_string();
    EXPECT_TRUE(same_bytes(beside->at("y"), expected->at("y")));
  }
  EXPECT_GT(failures, 0) << "no allocation was made through the hook";
}

TEST_P(FailurePaths, AStreamThatRunsOutOfMemoryResetsAndRunsOn) {
  std::unique_ptr<Session> session = make_session(GetParam());
  ASSERT_NE(session, nullptr);
  Stream reference_stream(*session);
  ASSERT_TRUE(reference_stream.run({{"x", x_tensor(2)}}).is_ok());
  Result<std::map<std::string, Tensor>> expected =
      reference_stream.run({{"x", x_tensor(2)}});
  ASSERT_TRUE(expected.is_ok());

  Stream stream(*session);
  Tensor x = x_tensor(2);
  fail_host_allocation(1);
  Result<std::map<std::string, Tensor>> failed = stream.run({{"x", x}});
  fail_host_allocation(0);
  ASSERT_FALSE(failed.is_ok());
  EXPECT_EQ(failed.status().code(), StatusCode::kOutOfMemory)
      << failed.status().to_string();
  // From its initial state again: two runs give what two runs give.
  stream.reset();
  ASSERT_TRUE(stream.run({{"x", x_tensor(2)}}).is_ok());
  Result<std::map<std::string, Tensor>> out = stream.run({{"x", x_tensor(2)}});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_TRUE(same_bytes(out->at("y"), expected->at("y")));
}

TEST_P(FailurePaths, MemoryBudgetFailsCompileAndRunsAboveIt) {
  // The weights alone (256 bytes) are above a 100-byte budget.
  SessionOptions options;
  options.backend = GetParam();
  options.limits.memory_budget_bytes = 100;
  Result<std::unique_ptr<Session>> refused =
      Session::create(small_graph(), options);
  ASSERT_FALSE(refused.is_ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kLimitExceeded);
  EXPECT_NE(refused.status().message().find(
                "above memory_budget (100 B); raise it with --memory-budget"),
            std::string::npos)
      << refused.status().message();

  // Bound at compile time: the plan's whole estimate counts.
  options.compile.dim_bindings = {{"seq", 100000}};
  options.limits.memory_budget_bytes = int64_t{1} << 20;
  refused = Session::create(small_graph(), options);
  ASSERT_FALSE(refused.is_ok());
  EXPECT_NE(refused.status().message().find("one run needs"), std::string::npos)
      << refused.status().message();

  // Unbound: a short run fits, a long one fails before it allocates.
  Limits limits;
  limits.memory_budget_bytes = 64 << 10;
  std::unique_ptr<Session> session = make_session(GetParam(), limits);
  ASSERT_NE(session, nullptr);
  EXPECT_TRUE(session->run({{"x", x_tensor(4)}}).is_ok());
  Tensor long_x = x_tensor(4096);
  fail_host_allocation(1);  // any allocation would fail as out of memory
  Result<std::map<std::string, Tensor>> big = session->run({{"x", long_x}});
  fail_host_allocation(0);
  ASSERT_FALSE(big.is_ok());
  EXPECT_EQ(big.status().code(), StatusCode::kLimitExceeded)
      << big.status().to_string();
  EXPECT_NE(big.status().message().find("a run with {seq=4096} needs"),
            std::string::npos)
      << big.status().message();
  EXPECT_TRUE(session->run({{"x", x_tensor(4)}}).is_ok());
}

TEST_P(FailurePaths, GraphLimitsFailSessionCreation) {
  SessionOptions options;
  options.backend = GetParam();
  options.limits.max_nodes = 2;
  Result<std::unique_ptr<Session>> refused =
      Session::create(small_graph(), options);
  ASSERT_FALSE(refused.is_ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kLimitExceeded);
  EXPECT_EQ(refused.status().message(),
            "graph 'small': the graph needs 4 nodes, above max_nodes (2 "
            "nodes); raise it with --max-nodes / SessionOptions::limits");

  options.limits = Limits{};
  options.limits.max_tensor_bytes = 128;
  refused = Session::create(small_graph(), options);
  ASSERT_FALSE(refused.is_ok());
  EXPECT_NE(refused.status().message().find(
                "tensor 'w' needs 256 B, above max_tensor_bytes (128 B)"),
            std::string::npos)
      << refused.status().message();
}

INSTANTIATE_TEST_SUITE_P(HostBackends, FailurePaths,
                         ::testing::ValuesIn(host_backends()));

// CausalConvWithState in f64: the reference runs it, the CPU backend has
// only f32/f16/bf16 kernels for it.
Graph f64_conv_graph() {
  GraphBuilder b("f64_conv");
  ValueId x = b.input("x", DType::kF64, {1, 2, 4});
  ValueId w = b.constant(
      "w", Tensor::from_vector<double>({2, 1, 3}, {1, 2, 3, 4, 5, 6}));
  NodeOptions options;
  options.name = "conv";
  b.output(b.add("CausalConvWithState", {x, w}, {}, options), "y");
  Result<Graph> graph = std::move(b).build();
  EXPECT_TRUE(graph.is_ok()) << graph.status().to_string();
  return graph.is_ok() ? std::move(graph).value() : Graph();
}

TEST(FailurePathsBackends, ANodeTheBackendLacksIsAnErrorNamingIt) {
  SessionOptions options;
  options.backend = "reference";
  Result<std::unique_ptr<Session>> reference =
      Session::create(f64_conv_graph(), options);
  EXPECT_TRUE(reference.is_ok()) << reference.status().to_string();
  bool have_cpu = false;
  for (const std::string& name : compiled_backends()) have_cpu |= name == "cpu";
  if (!have_cpu) GTEST_SKIP() << "the CPU backend is not built";
  options.backend = "cpu";
  Result<std::unique_ptr<Session>> refused =
      Session::create(f64_conv_graph(), options);
  ASSERT_FALSE(refused.is_ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kUnsupported);
  std::string message = refused.status().message();
  EXPECT_NE(message.find("[CausalConvWithState] node 'conv'"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("backend 'cpu'"), std::string::npos) << message;
}

}  // namespace
}  // namespace seqrt
