// An executable compiled at its first run (runtime/multi_backend.h): for a
// graph whose inputs' ranks are not known until then (an If's outputs).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "backends/backend.h"

namespace seqrt {

// A segment whose inputs' ranks the whole graph does not know (an If's
// outputs): compiled at its first run for the dims it is fed, and again
// for each new set of dims (kept, as a backend that records fixed command
// buffers does for each shape binding).
class DeferredExecutable : public Executable {
 public:
  static constexpr size_t kMaxCompiledDims = 16;

  DeferredExecutable(Graph graph, Backend& backend, CompileOptions options)
      : graph_(std::move(graph)), backend_(backend), options_(options) {}

  Result<std::vector<Tensor>> run(std::vector<Tensor> inputs) const override;

  // The report of the most recent compile ("" before the first run).
  std::string placement_report(
      const std::map<std::string, int64_t>& bindings) const override;

 private:
  Result<std::shared_ptr<Executable>> compile_for(
      const std::vector<std::vector<int64_t>>& dims) const;

  Graph graph_;
  Backend& backend_;
  CompileOptions options_;
  mutable std::mutex mutex_;
  mutable std::map<std::vector<std::vector<int64_t>>,
                   std::shared_ptr<Executable>>
      compiled_;
  mutable std::shared_ptr<Executable> latest_;
};

// Whether a graph input has no known rank (then compile it deferred).
bool has_input_of_unknown_rank(const Graph& graph);

}  // namespace seqrt
