// Imports a few of the official ONNX node tests shipped beside the checkout
// and compares a run on the reference backend with their expected outputs.
// (The full suite runs in tests/onnx_node/.)
#include <sys/stat.h>

#include <cmath>
#include <cstdlib>

#include <gtest/gtest.h>

#include "importers/onnx/importer.h"
#include "importers/onnx/tensor_proto.h"
#include "runtime/session.h"

namespace seqrt {
namespace {

std::string node_tests_dir() {
  const char* shared = std::getenv("SEQRT_SHARED_DIR");
  std::string dir = shared != nullptr ? shared : SEQRT_DEFAULT_SHARED_DIR;
  return dir + "/onnx-node-tests/node";
}

bool exists(const std::string& path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0;
}

void expect_close(const Tensor& actual, const Tensor& expected,
                  const std::string& what) {
  ASSERT_EQ(actual.dtype(), expected.dtype()) << what;
  ASSERT_EQ(actual.dims(), expected.dims()) << what;
  for (int64_t i = 0; i < actual.num_elements(); ++i) {
    double a = actual.element_f64(i);
    double e = expected.element_f64(i);
    ASSERT_LE(std::fabs(a - e), 1e-5 + 1e-4 * std::fabs(e))
        << what << " element " << i;
  }
}

class OnnxNodeFileTest : public ::testing::TestWithParam<const char*> {};

TEST_P(OnnxNodeFileTest, MatchesExpectedOutputs) {
  std::string dir = node_tests_dir() + "/" + GetParam();
  ASSERT_TRUE(exists(dir + "/model.onnx"))
      << "ONNX node tests not found at '" << dir
      << "' (set SEQRT_SHARED_DIR to the folder holding onnx-node-tests/)";
  Result<Graph> graph = import_onnx_file(dir + "/model.onnx");
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  std::map<std::string, Tensor> feeds;
  for (size_t i = 0; i < graph->inputs.size(); ++i) {
    std::string path =
        dir + "/test_data_set_0/input_" + std::to_string(i) + ".pb";
    Result<Tensor> tensor = read_tensor_pb_file(path);
    ASSERT_TRUE(tensor.is_ok()) << tensor.status().message();
    feeds[graph->value(graph->inputs[i]).name] = *tensor;
  }
  std::vector<std::string> output_names;
  for (ValueId id : graph->outputs)
    output_names.push_back(graph->value(id).name);

  auto session = Session::create(std::move(*graph), SessionOptions{});
  ASSERT_TRUE(session.is_ok()) << session.status().message();
  auto outputs = (*session)->run(feeds);
  ASSERT_TRUE(outputs.is_ok()) << outputs.status().message();
  for (size_t i = 0; i < output_names.size(); ++i) {
    std::string path =
        dir + "/test_data_set_0/output_" + std::to_string(i) + ".pb";
    Result<Tensor> expected = read_tensor_pb_file(path);
    ASSERT_TRUE(expected.is_ok()) << expected.status().message();
    expect_close((*outputs)[output_names[i]], *expected, output_names[i]);
  }
}

INSTANTIATE_TEST_SUITE_P(
    onnx_node_files, OnnxNodeFileTest,
    ::testing::Values("test_add", "test_matmul_2d",
                      "test_reduce_sum_default_axes_keepdims_example",
                      "test_reduce_mean_default_axes_keepdims_example",
                      "test_softmax_axis_0", "test_gelu_default_1",
                      "test_layer_normalization_2d_axis0",
                      "test_split_equal_parts_1d_opset13",
                      "test_split_variable_parts_2d_opset13",
                      "test_split_equal_parts_1d_opset18"));

}  // namespace
}  // namespace seqrt
