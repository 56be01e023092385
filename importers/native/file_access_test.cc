// FileAccess::kMap keeps the file mapped (and listed for the SIGBUS
// handler) while the graph lives; FileAccess::kCopy reads it into memory,
// so the file may be truncated or removed right after the load.
#include <unistd.h>

#include <cstdio>
#include <string>

#include <gtest/gtest.h>

#include "importers/native/mapped_file.h"
#include "importers/native/read_options.h"
#include "importers/native/test_models.h"
#include "importers/native/writer.h"

namespace seqrt {
namespace {

constexpr int64_t kElements = 100000;  // 400 KB of weights: many pages

SeqrtReadOptions options_for(FileAccess access) {
  SeqrtReadOptions options = testing_models::test_read_options();
  options.access = access;
  return options;
}

const Tensor& weights(const Graph& graph) {
  return graph.constants.at(graph.find_value("w"));
}

// Every element, so every page of a mapping is touched.
void expect_pattern(const Tensor& w) {
  ASSERT_EQ(w.num_elements(), kElements);
  const float* values = w.data_as<float>();
  for (int64_t i = 0; i < kElements; ++i) {
    ASSERT_EQ(values[i], static_cast<float>(i % 1000) * 0.5f) << i;
  }
}

std::string write_weights(const std::string& name) {
  std::string path = testing_models::temp_path(name);
  EXPECT_TRUE(
      write_seqrt_file(testing_models::weights_graph(kElements), path).is_ok());
  return path;
}

TEST(NativeFileAccess, AMappedLoadIsListedUntilTheGraphGoes) {
  std::string path = write_weights("mapped.seqrt");
  const void* data = nullptr;
  {
    Result<Graph> graph = read_seqrt_file(path, options_for(FileAccess::kMap));
    ASSERT_TRUE(graph.is_ok()) << graph.status().message();
    data = weights(*graph).data();
    const char* listed = find_mapped_file(data);
    ASSERT_NE(listed, nullptr);
    EXPECT_EQ(std::string(listed), path);
    expect_pattern(weights(*graph));
  }
  EXPECT_EQ(find_mapped_file(data), nullptr);
  std::remove(path.c_str());
}

TEST(NativeFileAccess, ACopiedLoadSurvivesTruncationAndRemoval) {
  std::string path = write_weights("copied.seqrt");
  Result<Graph> graph = read_seqrt_file(path, options_for(FileAccess::kCopy));
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  EXPECT_EQ(find_mapped_file(weights(*graph).data()), nullptr);
  // A mapped graph would die of SIGBUS reading its weights now.
  ASSERT_EQ(::truncate(path.c_str(), 0), 0);
  expect_pattern(weights(*graph));
  std::remove(path.c_str());
  expect_pattern(weights(*graph));
}

TEST(NativeFileAccess, ACopiedLoadChecksTheFileAsAMappedOneDoes) {
  std::string path = write_weights("copied_bad.seqrt");
  ASSERT_EQ(::truncate(path.c_str(), 100), 0);
  for (FileAccess access : {FileAccess::kMap, FileAccess::kCopy}) {
    Result<Graph> graph = read_seqrt_file(path, options_for(access));
    ASSERT_FALSE(graph.is_ok());
    EXPECT_EQ(graph.status().code(), StatusCode::kInvalidModel);
    EXPECT_NE(graph.status().message().find(path), std::string::npos)
        << graph.status().message();
  }
  std::remove(path.c_str());
  Result<Graph> missing = read_seqrt_file(path, FileAccess::kCopy);
  ASSERT_FALSE(missing.is_ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find(path), std::string::npos);
}

}  // namespace
}  // namespace seqrt
