// The ONNX backend node tests: finding the test folder, listing its tests,
// and running one test on the compiled backends.
//
// A test is a folder `<name>/` holding `model.onnx` and data sets
// `test_data_set_<N>/{input_<K>.pb, output_<K>.pb}`. Inputs follow the
// graph's inputs in order (initializers are not graph inputs) and outputs
// the graph's outputs.
#pragma once

#include <string>
#include <vector>

#include "graph/status.h"

namespace seqrt::onnx_node {

struct DataSet {
  std::string dir;
  std::vector<std::string> inputs;   // input_<K>.pb in order of K
  std::vector<std::string> outputs;  // output_<K>.pb in order of K
};

struct NodeTest {
  std::string name;  // the folder name, e.g. "test_add_bcast"
  std::string dir;
  std::vector<DataSet> data_sets;  // in order of N
};

// $SEQRT_ONNX_NODE_TESTS when set, else the pinned copy (ONNX 1.22)
// `<project_source_dir>/../shared/onnx-node-tests/node`; empty when that
// folder does not exist.
std::string find_node_test_root(const std::string& project_source_dir);

// Every test folder under `root` (those with a model.onnx), sorted by name.
Result<std::vector<NodeTest>> list_node_tests(const std::string& root);

enum class Outcome { kPass, kFail, kSkip };

struct TestResult {
  Outcome outcome = Outcome::kPass;
  std::string reason;  // why it failed or was skipped; empty on a pass
};

// Imports the test's model once and runs every data set on each backend;
// one result per backend, in the order of `backends`.
std::vector<TestResult> run_node_test(const NodeTest& test,
                                      const std::vector<std::string>& backends);

}  // namespace seqrt::onnx_node
