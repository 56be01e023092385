#include "tests/onnx_node/node_test.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <system_error>
#include <utility>

#include <fmt/format.h>

#include "importers/onnx/importer.h"
#include "importers/onnx/tensor_proto.h"
#include "runtime/backend_registry.h"
#include "tests/device_skip.h"
#include "tests/onnx_node/tensor_compare.h"

namespace seqrt::onnx_node {
namespace {

namespace fs = std::filesystem;

bool is_dir(const std::string& path) {
  std::error_code error;
  return !path.empty() && fs::is_directory(path, error);
}

// Files `<prefix><K>.pb` in `dir`, in order of K; stops at the first gap,
// as ONNX numbers them from 0 without gaps.
std::vector<std::string> numbered_files(const fs::path& dir,
                                        const std::string& prefix) {
  std::vector<std::string> files;
  for (int k = 0;; ++k) {
    const fs::path path = dir / fmt::format("{}{}.pb", prefix, k);
    std::error_code error;
    if (!fs::is_regular_file(path, error)) break;
    files.push_back(path.string());
  }
  return files;
}

// Data sets `test_data_set_<N>` in order of N.
std::vector<DataSet> list_data_sets(const fs::path& test_dir) {
  std::vector<DataSet> data_sets;
  for (int n = 0;; ++n) {
    const fs::path dir = test_dir / fmt::format("test_data_set_{}", n);
    if (!is_dir(dir.string())) break;
    data_sets.push_back({dir.string(), numbered_files(dir, "input_"),
                         numbered_files(dir, "output_")});
  }
  return data_sets;
}

Result<std::vector<Tensor>> read_tensors(
    const std::vector<std::string>& paths) {
  std::vector<Tensor> tensors;
  for (const std::string& path : paths) {
    SEQRT_ASSIGN_OR_RETURN(Tensor tensor, read_tensor_pb_file(path));
    tensors.push_back(std::move(tensor));
  }
  return tensors;
}

std::string data_set_label(const DataSet& data_set) {
  return fs::path(data_set.dir).filename().string();
}

TestResult fail(std::string reason) {
  return {Outcome::kFail, std::move(reason)};
}

// Runs one data set on a compiled graph; a failure says what differed.
TestResult run_data_set(const Graph& graph, const Executable& executable,
                        const DataSet& data_set) {
  const std::string label = data_set_label(data_set);
  Result<std::vector<Tensor>> inputs = read_tensors(data_set.inputs);
  if (!inputs.is_ok()) {
    return fail(fmt::format("{}: reading inputs: {}", label,
                            inputs.status().to_string()));
  }
  if (inputs->size() != graph.inputs.size()) {
    return fail(fmt::format("{}: {} input files, but the graph has {} inputs",
                            label, inputs->size(), graph.inputs.size()));
  }
  Result<std::vector<Tensor>> expected = read_tensors(data_set.outputs);
  if (!expected.is_ok()) {
    return fail(fmt::format("{}: reading expected outputs: {}", label,
                            expected.status().to_string()));
  }
  Result<std::vector<Tensor>> got = executable.run(*inputs);
  if (!got.is_ok()) {
    return fail(fmt::format("run: {}", got.status().to_string()));
  }
  if (got->size() != expected->size()) {
    return fail(fmt::format("{}: {} outputs, expected {}", label, got->size(),
                            expected->size()));
  }
  for (size_t k = 0; k < got->size(); ++k) {
    std::optional<std::string> mismatch =
        compare_tensors((*got)[k], (*expected)[k]);
    if (mismatch) {
      const std::string& name = graph.value(graph.outputs[k]).name;
      return fail(
          fmt::format("{}: output {} '{}': {}", label, k, name, *mismatch));
    }
  }
  return {};
}

TestResult run_on_backend(const Graph& graph, const NodeTest& test,
                          const std::string& backend_name) {
  Result<std::unique_ptr<Backend>> backend = create_backend(backend_name);
  if (!backend.is_ok()) {
    if (device_skip::may_skip_for_no_device(backend_name, backend.status())) {
      return {Outcome::kSkip, backend.status().to_string()};
    }
    return fail(fmt::format("backend: {}", backend.status().to_string()));
  }
  Result<std::unique_ptr<Executable>> executable =
      (*backend)->compile(graph, CompileOptions{});
  if (!executable.is_ok()) {
    return fail(fmt::format("compile: {}", executable.status().to_string()));
  }
  for (const DataSet& data_set : test.data_sets) {
    TestResult result = run_data_set(graph, **executable, data_set);
    if (result.outcome != Outcome::kPass) return result;
  }
  return {};
}

}  // namespace

std::string find_node_test_root(const std::string& project_source_dir) {
  // One pinned copy (ONNX 1.22), never whichever onnx package is
  // installed: the expected-failure lists are written against it.
  const char* env = std::getenv("SEQRT_ONNX_NODE_TESTS");
  const std::string dir =
      env != nullptr && env[0] != '\0'
          ? std::string(env)
          : project_source_dir + "/../shared/onnx-node-tests/node";
  return is_dir(dir) ? fs::path(dir).lexically_normal().string() : "";
}

Result<std::vector<NodeTest>> list_node_tests(const std::string& root) {
  std::error_code error;
  fs::directory_iterator entries(root, error);
  if (error) {
    return io_error("cannot list ONNX node test folder '{}': {}", root,
                    error.message());
  }
  std::vector<NodeTest> tests;
  for (const fs::directory_entry& entry : entries) {
    std::error_code entry_error;
    if (!fs::is_regular_file(entry.path() / "model.onnx", entry_error)) {
      continue;
    }
    tests.push_back({entry.path().filename().string(), entry.path().string(),
                     list_data_sets(entry.path())});
  }
  std::sort(
      tests.begin(), tests.end(),
      [](const NodeTest& a, const NodeTest& b) { return a.name < b.name; });
  return tests;
}

std::vector<TestResult> run_node_test(
    const NodeTest& test, const std::vector<std::string>& backends) {
  if (test.data_sets.empty()) {
    return std::vector<TestResult>(
        backends.size(), {Outcome::kSkip, "no test_data_set_0 folder"});
  }
  Result<Graph> graph =
      import_onnx_file((fs::path(test.dir) / "model.onnx").string());
  if (!graph.is_ok()) {
    return std::vector<TestResult>(
        backends.size(),
        fail(fmt::format("import: {}", graph.status().to_string())));
  }
  std::vector<TestResult> results;
  for (const std::string& backend : backends) {
    results.push_back(run_on_backend(*graph, test, backend));
  }
  return results;
}

}  // namespace seqrt::onnx_node
