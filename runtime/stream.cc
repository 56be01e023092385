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

namespace {

// A restored state must fit its input: the next run would refuse it later,
// with the Stream's state already replaced.
Status check_state_type(const Value& input, const Tensor& tensor) {
  bool fits = tensor.dtype() == input.dtype;
  if (fits && input.shape) {
    fits = input.shape->rank() == tensor.rank();
    for (size_t d = 0; fits && d < tensor.rank(); ++d) {
      const Dim& dim = (*input.shape)[d];
      fits = !dim.is_fixed() || dim.value() == tensor.dim(d);
    }
  }
  if (fits) return Status::ok();
  return invalid_argument(
      "state '{}' must be {} {}, got {} {}", input.name,
      dtype_name(input.dtype), input.shape ? input.shape->to_string() : "(any)",
      dtype_name(tensor.dtype()), dims_to_string(tensor.dims()));
}

}  // namespace

Status Stream::restore(std::map<std::string, Tensor> state) {
  const Graph& graph = session_.graph();
  for (const auto& [name, tensor] : state) {
    const Value* input = nullptr;
    for (const StatePair& pair : graph.state_pairs) {
      if (graph.value(pair.input).name == name)
        input = &graph.value(pair.input);
    }
    if (input == nullptr) {
      return invalid_argument("'{}' is not a state input of graph '{}'", name,
                              graph.name);
    }
    SEQRT_RETURN_IF_ERROR(check_state_type(*input, tensor));
  }
  state_ = std::move(state);
  return Status::ok();
}

}  // namespace seqrt
