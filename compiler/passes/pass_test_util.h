// Test helpers for the passes: random inputs, running a graph through a
// reference Session, and the before/after check every fusion test makes.
// Header-only and used only by the passes' tests.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "compiler/infer/infer_graph.h"
#include "compiler/passes/pass.h"
#include "compiler/passes/passes.h"
#include "graph/builder.h"
#include "graph/verifier.h"
#include "runtime/session.h"

namespace seqrt::pass_testing {

inline Tensor random_tensor(std::vector<int64_t> dims, uint32_t seed,
                            float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  Result<Tensor> tensor = Tensor::allocate(DType::kF32, std::move(dims));
  EXPECT_TRUE(tensor.is_ok());
  float* data = tensor->mutable_data_as<float>();
  for (int64_t i = 0; i < tensor->num_elements(); ++i) data[i] = normal(rng);
  return *tensor;
}

inline Graph build_or_die(GraphBuilder&& builder) {
  Result<Graph> graph = std::move(builder).build();
  EXPECT_TRUE(graph.is_ok()) << graph.status().to_string();
  return graph.is_ok() ? std::move(graph).value() : Graph();
}

inline size_t count_ops(const Graph& graph, const std::string& op) {
  size_t count = 0;
  for (const Node& node : graph.nodes) count += node.op == op ? 1 : 0;
  return count;
}

inline std::map<std::string, Tensor> run_reference(
    const Graph& graph, const std::map<std::string, Tensor>& feeds) {
  // As given: Session::create would otherwise fuse the "before" graph too.
  SessionOptions options;
  options.optimize = false;
  Result<std::unique_ptr<Session>> session = Session::create(graph, options);
  EXPECT_TRUE(session.is_ok()) << session.status().to_string();
  if (!session.is_ok()) return {};
  Result<std::map<std::string, Tensor>> outputs = (*session)->run(feeds);
  EXPECT_TRUE(outputs.is_ok()) << outputs.status().to_string();
  return outputs.is_ok() ? *outputs : std::map<std::string, Tensor>();
}

// Equal within `rtol` relative to the largest magnitude of `expected`.
inline void expect_close(const Tensor& actual, const Tensor& expected,
                         double rtol = 1e-5) {
  ASSERT_EQ(actual.dims(), expected.dims());
  ASSERT_EQ(actual.dtype(), expected.dtype());
  double largest = 0;
  for (int64_t i = 0; i < expected.num_elements(); ++i) {
    largest = std::max(largest, std::fabs(expected.element_f64(i)));
  }
  for (int64_t i = 0; i < expected.num_elements(); ++i) {
    ASSERT_NEAR(actual.element_f64(i), expected.element_f64(i),
                rtol * std::max(largest, 1.0))
        << "element " << i;
  }
}

// Runs inference then `passes` on a copy of `graph` and returns it; checks
// that it still verifies and type-checks.
inline Graph apply(const Graph& graph, std::vector<Pass> passes) {
  Graph result = graph;
  passes.insert(passes.begin(), infer_shapes_pass());
  Result<std::vector<PassStats>> stats = run_passes(result, passes);
  EXPECT_TRUE(stats.is_ok()) << stats.status().to_string();
  EXPECT_TRUE(verify_graph(result).is_ok());
  EXPECT_TRUE(infer_graph(result).is_ok());
  return result;
}

// The fusion test: `pass` turns `graph` into one with `fused_count` nodes
// of `fused_op`, and both give the same outputs on `feeds` within 1e-5.
inline Graph expect_fused(const Graph& graph, const Pass& pass,
                          const std::string& fused_op, size_t fused_count,
                          const std::map<std::string, Tensor>& feeds) {
  Graph fused = apply(graph, {pass});
  EXPECT_EQ(count_ops(fused, fused_op), fused_count);
  std::map<std::string, Tensor> before = run_reference(graph, feeds);
  std::map<std::string, Tensor> after = run_reference(fused, feeds);
  EXPECT_EQ(before.size(), after.size());
  for (const auto& [name, tensor] : before) {
    SCOPED_TRACE(name);
    auto it = after.find(name);
    EXPECT_NE(it, after.end());
    if (it != after.end()) expect_close(it->second, tensor);
  }
  return fused;
}

// The negative test: `pass` leaves `graph` as it is.
inline void expect_unchanged(const Graph& graph, const Pass& pass) {
  Graph typed = apply(graph, {});
  Graph result = apply(graph, {pass});
  EXPECT_TRUE(graphs_equal(result, typed));
}

}  // namespace seqrt::pass_testing
