// Test helpers for the control-flow ops: typed subgraphs built in code.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>

#include "compiler/infer/infer_graph.h"
#include "graph/builder.h"

namespace seqrt::op_testing {

// The builder's graph, verified and typed by infer_graph; an empty pointer
// (and a test failure) when either fails.
inline std::shared_ptr<Graph> typed_graph(GraphBuilder builder) {
  Result<Graph> graph = std::move(builder).build();
  EXPECT_TRUE(graph.is_ok()) << graph.status().to_string();
  if (!graph.is_ok()) return nullptr;
  Status status = infer_graph(*graph);
  EXPECT_TRUE(status.is_ok()) << status.to_string();
  if (!status.is_ok()) return nullptr;
  return std::make_shared<Graph>(std::move(graph).value());
}

}  // namespace seqrt::op_testing
