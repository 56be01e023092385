#include "runtime/stream.h"

namespace seqrt {

Result<std::map<std::string, Tensor>> Stream::run(
    const std::map<std::string, Tensor>& feeds) {
  std::map<std::string, Tensor> all = state_;
  for (const auto& [name, tensor] : feeds) all[name] = tensor;
  SEQRT_ASSIGN_OR_RETURN(std::vector<Tensor> inputs,
                         session_.bind_inputs(std::move(all)));
  // `inputs` now holds the only handles to the state.
  state_.clear();
  Result<std::map<std::string, Tensor>> outputs =
      session_.run_bound(std::move(inputs));
  if (!outputs.is_ok()) {
    const Status& failed = outputs.status();
    return Status(failed.code(),
                  failed.message() +
                      " (the stream's state is reset to its initial value)");
  }
  const Graph& graph = session_.graph();
  for (const StatePair& pair : graph.state_pairs) {
    const std::string& output = graph.value(pair.output).name;
    auto it = outputs->find(output);
    if (it == outputs->end()) {
      return internal_error("graph '{}' did not return state output '{}'",
                            graph.name, output);
    }
    state_[graph.value(pair.input).name] = std::move(it->second);
    outputs->erase(it);
  }
  return outputs;
}

Status Stream::restore(std::map<std::string, Tensor> state) {
  const Graph& graph = session_.graph();
  for (const auto& [name, tensor] : state) {
    bool known = false;
    for (const StatePair& pair : graph.state_pairs) {
      known = known || graph.value(pair.input).name == name;
    }
    if (!known) {
      return invalid_argument("'{}' is not a state input of graph '{}'", name,
                              graph.name);
    }
  }
  state_ = std::move(state);
  return Status::ok();
}

}  // namespace seqrt
