// Subgraphs nested up to kMaxSubgraphDepth parse (protobuf's recursion
// limit is sized for them); deeper ones are refused with a depth error that
// names the limit and the flag, not as corrupt bytes.
#include <cstdio>
#include <fstream>
#include <string>

#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <gtest/gtest.h>

#include "graph/limits.h"
#include "graph/verifier.h"
#include "importers/onnx/onnx_test_util.h"
#include "importers/onnx/proto_depth.h"
#include "runtime/session.h"

namespace seqrt {
namespace {

using namespace onnx_test;  // NOLINT: test helpers

std::string write_model(const onnx::ModelProto& model,
                        const std::string& name) {
  std::string path = ::testing::TempDir() + name;
  std::ofstream(path, std::ios::binary) << serialize(model);
  return path;
}

int depth_of(const std::string& bytes, int limit) {
  google::protobuf::io::ArrayInputStream input(bytes.data(),
                                               static_cast<int>(bytes.size()));
  return onnx_subgraph_depth(input, limit);
}

TEST(onnx_subgraph_depth, TheScanMeasuresNestedIfs) {
  EXPECT_EQ(depth_of(serialize(nested_if_model(0)), 64), 0);
  EXPECT_EQ(depth_of(serialize(nested_if_model(1)), 64), 1);
  EXPECT_EQ(depth_of(serialize(nested_if_model(60)), 64), 60);
  // Stops counting just past the limit.
  EXPECT_EQ(depth_of(serialize(nested_if_model(80)), 64), 65);
  EXPECT_EQ(depth_of("\xff\xff\xff", 64), -1);
}

TEST(onnx_subgraph_depth, SixtyLevelsLoadAndRunWithTheLimitRaised) {
  std::string path = write_model(nested_if_model(60), "depth60.onnx");
  Result<Graph> graph = import_onnx_file(path);
  std::remove(path.c_str());
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();

  // The default session limit (16) refuses it, naming the flag.
  Result<std::unique_ptr<Session>> refused = Session::create(*graph, {});
  ASSERT_FALSE(refused.is_ok());
  EXPECT_NE(refused.status().message().find("--max-subgraph-depth"),
            std::string::npos)
      << refused.status().message();

  SessionOptions options;
  options.backend = "reference";
  ASSERT_TRUE(
      set_limit(options.limits, LimitKind::kMaxSubgraphDepth, 64).is_ok());
  Result<std::unique_ptr<Session>> session =
      Session::create(std::move(*graph), options);
  ASSERT_TRUE(session.is_ok()) << session.status().message();
  for (bool cond : {true, false}) {
    auto out =
        (*session)->run({{"cond", Tensor::scalar<bool>(cond)},
                         {"x", Tensor::from_vector<float>({2}, {3, -4})}});
    ASSERT_TRUE(out.is_ok()) << out.status().message();
    Tensor expected = cond ? Tensor::from_vector<float>({2}, {-3, 4})
                           : Tensor::from_vector<float>({2}, {3, -4});
    EXPECT_TRUE((*out)["y"].same_as(expected)) << cond;
  }
}

TEST(onnx_subgraph_depth, TheDeepestAllowedLevelParses) {
  Result<Graph> graph = import_model(nested_if_model(kMaxSubgraphDepth));
  EXPECT_TRUE(graph.is_ok()) << graph.status().message();
}

void expect_depth_error(const Status& status) {
  EXPECT_EQ(status.code(), StatusCode::kLimitExceeded) << status.message();
  for (const char* part :
       {"nests subgraphs", "more than 64 levels", "--max-subgraph-depth"}) {
    EXPECT_NE(status.message().find(part), std::string::npos)
        << status.message();
  }
  EXPECT_EQ(status.message().find("corrupt"), std::string::npos)
      << status.message();
}

TEST(onnx_subgraph_depth, DeeperThanTheLimitIsADepthErrorNotCorruption) {
  for (int depth : {kMaxSubgraphDepth + 1, 80, 200}) {
    SCOPED_TRACE(depth);
    onnx::ModelProto model = nested_if_model(depth);
    Result<Graph> from_memory = import_model(model);
    ASSERT_FALSE(from_memory.is_ok());
    if (depth == kMaxSubgraphDepth + 1) {
      // Still parses: the verifier refuses it, naming the bound.
      EXPECT_EQ(from_memory.status().code(), StatusCode::kLimitExceeded);
      EXPECT_NE(from_memory.status().message().find("deeper than 64"),
                std::string::npos)
          << from_memory.status().message();
      continue;
    }
    expect_depth_error(from_memory.status());
    std::string path = write_model(model, "deep.onnx");
    Result<Graph> from_file = import_onnx_file(path);
    std::remove(path.c_str());
    ASSERT_FALSE(from_file.is_ok());
    expect_depth_error(from_file.status());
    EXPECT_NE(from_file.status().message().find(path), std::string::npos);
  }
}

TEST(onnx_subgraph_depth, GarbageIsStillCorrupt) {
  std::string bytes = serialize(nested_if_model(3));
  bytes.resize(bytes.size() / 2);
  Result<Graph> graph = import_onnx_buffer(
      reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "");
  ASSERT_FALSE(graph.is_ok());
  EXPECT_NE(graph.status().message().find("truncated or corrupt"),
            std::string::npos)
      << graph.status().message();
}

}  // namespace
}  // namespace seqrt
