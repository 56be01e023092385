#include "runtime/deferred_executable.h"

#include <set>

#include "compiler/infer/infer_graph.h"

namespace seqrt {

Result<std::vector<Tensor>> DeferredExecutable::run(
    std::vector<Tensor> inputs) const {
  std::vector<std::vector<int64_t>> key;
  for (const Tensor& t : inputs) key.push_back(t.dims());
  std::shared_ptr<Executable> compiled;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = compiled_.find(key);
    if (it == compiled_.end()) {
      SEQRT_ASSIGN_OR_RETURN(std::shared_ptr<Executable> made,
                             compile_for(key));
      // Inputs of many lengths (streamed chunks) must not grow it without
      // end: past the cap, start again (runs in flight keep theirs).
      if (compiled_.size() >= kMaxCompiledDims) compiled_.clear();
      it = compiled_.emplace(key, std::move(made)).first;
    }
    compiled = it->second;
    latest_ = compiled;
  }
  return compiled->run(std::move(inputs));
}

std::string DeferredExecutable::placement_report(
    const std::map<std::string, int64_t>& bindings) const {
  std::shared_ptr<Executable> latest;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    latest = latest_;
  }
  return latest ? latest->placement_report(bindings) : std::string();
}

Result<std::shared_ptr<Executable>> DeferredExecutable::compile_for(
    const std::vector<std::vector<int64_t>>& dims) const {
  if (dims.size() != graph_.inputs.size()) {
    return invalid_argument("graph '{}' takes {} inputs, got {}", graph_.name,
                            graph_.inputs.size(), dims.size());
  }
  Graph typed = graph_;
  std::set<ValueId> inputs(typed.inputs.begin(), typed.inputs.end());
  for (size_t i = 0; i < dims.size(); ++i) {
    typed.value(typed.inputs[i]).shape = Shape::from_dims(dims[i]);
  }
  for (size_t id = 0; id < typed.values.size(); ++id) {
    if (!inputs.count(static_cast<ValueId>(id)) &&
        !typed.is_constant(static_cast<ValueId>(id))) {
      typed.values[id].shape.reset();
    }
  }
  SEQRT_RETURN_IF_ERROR(infer_graph(typed));
  SEQRT_ASSIGN_OR_RETURN(std::unique_ptr<Executable> made,
                         backend_.compile(typed, options_));
  return std::shared_ptr<Executable>(std::move(made));
}

bool has_input_of_unknown_rank(const Graph& graph) {
  for (ValueId id : graph.inputs) {
    if (!graph.value(id).shape) return true;
  }
  return false;
}

}  // namespace seqrt
