// onnx_node_runner: runs the ONNX backend node tests on the compiled
// backends and checks the outcomes against the checked-in expected-failure
// lists. Prints one line per unexpected outcome and ends with one summary
// line "N passed, M failed, K skipped". See README.md.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "runtime/backend_registry.h"
#include "runtime/multi_backend.h"
#include "tests/device_skip.h"
#include "tests/onnx_node/expected_failures.h"
#include "tests/onnx_node/node_test.h"

namespace {

using seqrt::onnx_node::ExpectedFailures;
using seqrt::onnx_node::NodeTest;
using seqrt::onnx_node::Outcome;
using seqrt::onnx_node::TestResult;

constexpr int kUnexpectedOutcome = 1;
constexpr int kUsageError = 2;
// ctest reports this exit code as a skipped test (SKIP_RETURN_CODE).
constexpr int kNoTests = 77;
// Longest reason --list-failures writes for a new entry; the full
// message is one --verbose run away.
constexpr size_t kMaxReasonLength = 240;

struct Options {
  std::string filter;
  std::string backend;
  std::string tests_dir;
  std::string lists_dir = SEQRT_ONNX_NODE_LISTS_DIR;
  bool list_failures = false;
  bool verbose = false;
  int jobs = 0;
};

struct TestRun {
  std::vector<TestResult> results;  // one per backend
  double seconds = 0;
};

struct Counts {
  int passed = 0;
  int failed = 0;
  int skipped = 0;
};

// Runs the tests on `jobs` threads; results come back in test order.
std::vector<TestRun> run_all(const std::vector<NodeTest>& tests,
                             const std::vector<std::string>& backends,
                             int jobs) {
  std::vector<TestRun> runs(tests.size());
  std::atomic<size_t> next{0};
  auto worker = [&]() {
    for (size_t i = next++; i < tests.size(); i = next++) {
      const auto start = std::chrono::steady_clock::now();
      runs[i].results = seqrt::onnx_node::run_node_test(tests[i], backends);
      runs[i].seconds = std::chrono::duration<double>(
                            std::chrono::steady_clock::now() - start)
                            .count();
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < jobs; ++t) threads.emplace_back(worker);
  for (std::thread& thread : threads) thread.join();
  return runs;
}

// Messages may list items on indented lines ("...:\n  Acos (domain...)");
// the runner prints one line per outcome, so they become "...: Acos ...; ".
std::string one_line(const std::string& message) {
  std::string line;
  for (size_t i = 0; i < message.size(); ++i) {
    if (message[i] != '\n') {
      line += message[i];
      continue;
    }
    while (i + 1 < message.size() && message[i + 1] == ' ') ++i;
    if (!line.empty() && line.back() != ':') line += ';';
    line += ' ';
  }
  return line;
}

// A one-line reason for a new list entry, from a failure message. '#'
// starts the reason in the list format, so it may not appear in it.
std::string reason_from_message(const std::string& failure) {
  std::string message = one_line(failure);
  std::replace(message.begin(), message.end(), '#', ' ');
  if (message.size() > kMaxReasonLength) {
    message = message.substr(0, kMaxReasonLength - 3) + "...";
  }
  return message;
}

// Classifies one outcome against the list, printing unexpected ones (and
// all of them with --verbose).
void report(const std::string& backend, const NodeTest& test,
            const TestResult& result, double seconds,
            const ExpectedFailures& expected, const Options& options,
            Counts& counts) {
  const auto entry = expected.find(test.name);
  const bool listed = entry != expected.end();
  const std::string where = fmt::format("[{}] {}", backend, test.name);
  if (result.outcome == Outcome::kSkip) {
    ++counts.skipped;
    if (options.verbose)
      fmt::print("SKIP {}: {}\n", where, one_line(result.reason));
  } else if (result.outcome == Outcome::kPass && listed) {
    ++counts.failed;
    fmt::print("UNEXPECTED PASS {}: unexpectedly passing: remove from list\n",
               where);
  } else if (result.outcome == Outcome::kPass) {
    ++counts.passed;
    if (options.verbose) fmt::print("PASS {} ({:.2f} s)\n", where, seconds);
  } else if (listed) {
    ++counts.skipped;
    if (options.verbose) {
      fmt::print("EXPECTED FAIL {} ({}): {}\n", where, entry->second,
                 one_line(result.reason));
    }
  } else {
    ++counts.failed;
    fmt::print("FAIL {}: {}\n", where, one_line(result.reason));
  }
}

// The current failures of one backend in the list format: listed tests
// keep their reason, new ones get their failure message.
void print_failure_list(const std::string& backend,
                        const std::vector<NodeTest>& tests,
                        const std::vector<TestRun>& runs, size_t backend_index,
                        const ExpectedFailures& expected) {
  fmt::print(
      "# ONNX node tests expected to fail on the {} backend, one a line:\n"
      "#   test_name  # reason\n"
      "# Regenerate with: onnx_node_runner --backend {} --list-failures\n"
      "# (see tests/onnx_node/README.md).\n",
      backend, backend);
  for (size_t i = 0; i < tests.size(); ++i) {
    const TestResult& result = runs[i].results[backend_index];
    if (result.outcome != Outcome::kFail) continue;
    const auto entry = expected.find(tests[i].name);
    const std::string reason = entry != expected.end()
                                   ? entry->second
                                   : reason_from_message(result.reason);
    fmt::print("{}\n", seqrt::onnx_node::format_expected_failure(tests[i].name,
                                                                 reason));
  }
}

bool parse_options(int argc, char** argv, Options& options, int& exit_code) {
  CLI::App app("Runs the ONNX backend node tests on seqrt's backends",
               "onnx_node_runner");
  app.add_option("--filter", options.filter,
                 "Run only tests whose name contains this substring");
  app.add_option("--backend", options.backend,
                 "Run on this backend only (default: every compiled backend)");
  app.add_option("--tests-dir", options.tests_dir,
                 "The node test folder (default: see README.md)");
  app.add_option("--lists-dir", options.lists_dir,
                 "Folder of the expected_failures_<backend>.txt lists");
  app.add_option("--jobs,-j", options.jobs,
                 "Tests run at once (default: the number of cores)");
  app.add_flag("--list-failures", options.list_failures,
               "Print the current failures in the list format");
  app.add_flag("--verbose", options.verbose, "Print every outcome");
  // CLI11 reports parse results as exceptions; they end here.
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    exit_code = app.exit(e);
    return false;
  }
  return true;
}

std::vector<NodeTest> filtered(std::vector<NodeTest> tests,
                               const std::string& filter) {
  tests.erase(std::remove_if(tests.begin(), tests.end(),
                             [&](const NodeTest& test) {
                               return test.name.find(filter) ==
                                      std::string::npos;
                             }),
              tests.end());
  return tests;
}

int usage_error(const std::string& message) {
  std::fprintf(stderr, "onnx_node_runner: error: %s\n", message.c_str());
  return kUsageError;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  int exit_code = 0;
  if (!parse_options(argc, argv, options, exit_code)) return exit_code;

  const std::vector<std::string> compiled = seqrt::compiled_backends();
  std::vector<std::string> backends = compiled;
  if (!options.backend.empty()) {
    // One backend, or a list such as vulkan,cpu (heterogeneous execution).
    auto names = seqrt::parse_backend_list(options.backend);
    if (!names.is_ok()) return usage_error(names.status().message());
    for (const std::string& name : *names) {
      if (std::find(compiled.begin(), compiled.end(), name) == compiled.end()) {
        return usage_error(
            fmt::format("backend '{}' is not compiled in; "
                        "expected one of: {}",
                        name, fmt::join(compiled, ", ")));
      }
      // A backend with no device on this machine (no GPU, no driver) skips
      // the whole run with its reason instead of failing every test.
      auto probe = seqrt::create_backend(name);
      if (!probe.is_ok() &&
          seqrt::device_skip::may_skip_for_no_device(name, probe.status())) {
        fmt::print("skipped: backend '{}' is not available here: {}\n", name,
                   probe.status().message());
        return kNoTests;
      }
    }
    backends = {options.backend};
  }
  std::vector<ExpectedFailures> lists;
  for (const std::string& backend : backends) {
    // "vulkan,cpu" -> expected_failures_vulkan_cpu.txt
    std::string file = backend;
    std::replace(file.begin(), file.end(), ',', '_');
    auto list = seqrt::onnx_node::read_expected_failures(
        fmt::format("{}/expected_failures_{}.txt", options.lists_dir, file));
    if (!list.is_ok()) return usage_error(list.status().to_string());
    lists.push_back(std::move(list).value());
  }

  const std::string root =
      options.tests_dir.empty()
          ? seqrt::onnx_node::find_node_test_root(SEQRT_PROJECT_SOURCE_DIR)
          : options.tests_dir;
  if (root.empty()) {
    return usage_error(
        "no ONNX node test folder: expected the pinned copy in "
        "../shared/onnx-node-tests/node beside the checkout, or a folder "
        "named by SEQRT_ONNX_NODE_TESTS");
  }
  auto all_tests = seqrt::onnx_node::list_node_tests(root);
  if (!all_tests.is_ok()) return usage_error(all_tests.status().to_string());
  const std::vector<NodeTest> tests =
      filtered(std::move(all_tests).value(), options.filter);
  if (options.verbose) {
    fmt::print("{} tests from {}\n", tests.size(), root);
  }

  const int jobs = options.jobs > 0
                       ? options.jobs
                       : std::max(1u, std::thread::hardware_concurrency());
  const std::vector<TestRun> runs = run_all(tests, backends, jobs);
  if (options.list_failures) {
    for (size_t b = 0; b < backends.size(); ++b) {
      print_failure_list(backends[b], tests, runs, b, lists[b]);
    }
    return 0;
  }
  Counts counts;
  for (size_t i = 0; i < tests.size(); ++i) {
    for (size_t b = 0; b < backends.size(); ++b) {
      report(backends[b], tests[i], runs[i].results[b], runs[i].seconds,
             lists[b], options, counts);
    }
  }
  fmt::print("{} passed, {} failed, {} skipped\n", counts.passed, counts.failed,
             counts.skipped);
  return counts.failed > 0 ? kUnexpectedOutcome : 0;
}
