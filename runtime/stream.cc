#include "runtime/stream.h"

#include <exception>
#include <new>
#include <vector>

#include <fmt/format.h>

#include "runtime/kv_cache_stream.h"

namespace seqrt {
namespace {

// The index in graph.state_pairs of the pair whose input is `id`, or -1.
int state_of_input(const Graph& graph, ValueId id) {
  for (size_t p = 0; p < graph.state_pairs.size(); ++p) {
    if (graph.state_pairs[p].input == id) return static_cast<int>(p);
  }
  return -1;
}

bool is_state_output(const Graph& graph, ValueId id) {
  for (const StatePair& pair : graph.state_pairs) {
    if (pair.output == id) return true;
  }
  return false;
}

Status reset_error(const Status& failed) {
  return Status(
      failed.code(),
      failed.message() + " (the stream's state is reset to its initial value)");
}

// check_graph_inputs (backends/host/interpreter.h) for a run whose states stay
// on the device: `dims` of every graph input (the states' from the device),
// with the dtypes of the fed ones; symbols must agree across all of them.
Status check_inputs(const Graph& graph, const std::vector<const Tensor*>& fed,
                    const std::vector<std::vector<int64_t>>& dims) {
  std::map<std::string, int64_t> symbols;
  for (size_t i = 0; i < graph.inputs.size(); ++i) {
    const Value& value = graph.value(graph.inputs[i]);
    if (fed[i] != nullptr && value.dtype != DType::kUndefined &&
        fed[i]->dtype() != value.dtype) {
      return invalid_argument("input '{}' must be {}, got {}", value.name,
                              dtype_name(value.dtype),
                              dtype_name(fed[i]->dtype()));
    }
    if (!value.shape) continue;
    const Shape& shape = *value.shape;
    bool fits = shape.rank() == dims[i].size();
    for (size_t d = 0; fits && d < shape.rank(); ++d) {
      fits = !shape[d].is_fixed() || shape[d].value() == dims[i][d];
    }
    if (!fits) {
      return invalid_argument("input '{}' must have shape {}, got {}",
                              value.name, shape.to_string(),
                              dims_to_string(dims[i]));
    }
    for (size_t d = 0; d < shape.rank(); ++d) {
      if (!shape[d].is_symbol()) continue;
      auto [it, inserted] = symbols.emplace(shape[d].symbol_name(), dims[i][d]);
      if (!inserted && it->second != dims[i][d]) {
        return invalid_argument(
            "input '{}' has {} = {} but an earlier input or state has {} = {}",
            value.name, shape[d].symbol_name(), dims[i][d],
            shape[d].symbol_name(), it->second);
      }
    }
  }
  return Status::ok();
}

}  // namespace

Stream::Stream(const Session& session) : session_(session) {
  if (session.kv_cache_session_ != nullptr) {
    kv_cache_ = std::make_unique<KvCacheStream>(
        session, *session.kv_cache_session_, session.kv_cache_);
  }
}

Stream::~Stream() = default;

void Stream::reset() {
  if (kv_cache_ != nullptr) kv_cache_->reset();
  state_.clear();
  on_device_ = false;
}

Result<std::map<std::string, Tensor>> Stream::run(
    const std::map<std::string, Tensor>& feeds,
    const SessionRunOptions& run_options) {
  if (kv_cache_ != nullptr) return kv_cache_->run(feeds, run_options);
  RunControl control(session_.options().limits);
  session_.prepare_run(control, run_options);
  RunControl::Scope scope(&control);
  return run_controlled(feeds, control);
}

Result<std::map<std::string, Tensor>> Stream::run_controlled(
    const std::map<std::string, Tensor>& feeds, RunControl& control) {
  const Graph& graph = session_.graph();
  if (on_device_) {
    bool feeds_state = false;
    for (const StatePair& pair : graph.state_pairs) {
      feeds_state |= feeds.count(graph.value(pair.input).name) != 0;
    }
    if (!feeds_state) return step_on_device(feeds, control);
    // A fed state replaces the held one: the others come back to be
    // loaded with it.
    SEQRT_ASSIGN_OR_RETURN(state_, read_snapshot());
    on_device_ = false;
  }
  std::map<std::string, Tensor> all = state_;
  for (const auto& [name, tensor] : feeds) all[name] = tensor;
  SEQRT_ASSIGN_OR_RETURN(std::vector<Tensor> inputs,
                         session_.bind_inputs(std::move(all), control));
  return run_bound(std::move(inputs));
}

Result<std::map<std::string, Tensor>> Stream::run_bound(
    std::vector<Tensor> inputs) {
  const Graph& graph = session_.graph();
  const Executable& executable = *session_.executable_;
  if (executable.keeps_state_on_device() && !graph.state_pairs.empty()) {
    std::vector<Tensor> states(graph.state_pairs.size()), rest;
    for (size_t i = 0; i < graph.inputs.size(); ++i) {
      const int pair = state_of_input(graph, graph.inputs[i]);
      if (pair >= 0) {
        states[pair] = inputs[i];
      } else {
        rest.push_back(inputs[i]);
      }
    }
    if (device_state_ != nullptr) {
      SEQRT_RETURN_IF_ERROR(executable.write_state(*device_state_, states));
    } else {
      SEQRT_ASSIGN_OR_RETURN(device_state_, executable.create_state(states));
    }
    state_.clear();
    on_device_ = true;
    // Stopped before the device runs: the state just loaded is intact.
    SEQRT_RETURN_IF_ERROR(check_run_stop(
        [&] { return fmt::format("before graph '{}' ran", graph.name); }));
    return run_with_state(std::move(rest));
  }
  Result<std::map<std::string, Tensor>> outputs = internal_error("not run");
  if (in_place_) {
    // `inputs` now holds the only handles to the state.
    state_.clear();
    outputs = session_.run_bound(std::move(inputs));
    if (!outputs.is_ok()) return reset_error(outputs.status());
  } else {
    // The held handles keep the state intact whatever the step does.
    outputs = session_.run_bound(std::move(inputs));
    if (!outputs.is_ok()) return outputs.status();
    state_.clear();
  }
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

Result<std::map<std::string, Tensor>> Stream::step_on_device(
    const std::map<std::string, Tensor>& feeds, RunControl& control) {
  const Graph& graph = session_.graph();
  SEQRT_RETURN_IF_ERROR(session_.check_feed_names(feeds));
  const std::vector<std::vector<int64_t>> state_dims = device_state_->dims();
  std::map<std::string, int64_t> symbols = session_.bind_symbols(feeds);
  int64_t fed_bytes = 0;
  std::vector<const Tensor*> fed;
  std::vector<std::vector<int64_t>> dims;
  std::vector<std::string> missing;
  for (ValueId id : graph.inputs) {
    const Value& value = graph.value(id);
    const int pair = state_of_input(graph, id);
    auto it = feeds.find(value.name);
    if (pair >= 0) {
      fed.push_back(nullptr);
      dims.push_back(state_dims[pair]);
      if (!value.shape || value.shape->rank() != state_dims[pair].size()) {
        continue;
      }
      for (size_t d = 0; d < value.shape->rank(); ++d) {
        const Dim& dim = (*value.shape)[d];
        if (dim.is_symbol()) {
          symbols.emplace(dim.symbol_name(), state_dims[pair][d]);
        }
      }
    } else if (it != feeds.end()) {
      fed.push_back(&it->second);
      dims.push_back(it->second.dims());
      fed_bytes += static_cast<int64_t>(it->second.byte_size());
    } else {
      missing.push_back("'" + value.name + "'");
      fed.push_back(nullptr);
      dims.emplace_back();
    }
  }
  SEQRT_ASSIGN_OR_RETURN(int64_t planned,
                         session_.budget_->check_run(symbols, fed_bytes));
  control.set_planned_bytes(planned);
  if (!missing.empty()) {
    return invalid_argument("graph '{}': no tensor fed for input {}",
                            graph.name, fmt::join(missing, ", "));
  }
  SEQRT_RETURN_IF_ERROR(check_inputs(graph, fed, dims));
  std::vector<Tensor> inputs;
  for (const Tensor* tensor : fed) {
    if (tensor != nullptr) inputs.push_back(*tensor);
  }
  // The device runs the whole graph at once: stop before it starts, with
  // the state untouched.
  SEQRT_RETURN_IF_ERROR(check_run_stop(
      [&] { return fmt::format("before graph '{}' ran", graph.name); }));
  return run_with_state(std::move(inputs));
}

Result<std::map<std::string, Tensor>> Stream::run_with_state(
    std::vector<Tensor> inputs) {
  const Graph& graph = session_.graph();
  // As Session::run_bound: exhausted memory and exceptions become values.
  Result<std::vector<Tensor>> results =
      internal_error("graph '{}': the run did not start", graph.name);
  try {
    results =
        session_.executable_->run_with_state(std::move(inputs), *device_state_);
  } catch (const std::bad_alloc&) {
    results = make_error(StatusCode::kOutOfMemory,
                         "graph '{}' on backend '{}': out of host memory",
                         graph.name, session_.options().backend);
  } catch (const std::exception& error) {
    results =
        internal_error("graph '{}' on backend '{}': unexpected exception: {}",
                       graph.name, session_.options().backend, error.what());
  }
  if (!results.is_ok()) {
    // The state may be partly updated: the next run loads the initial one.
    reset();
    return reset_error(results.status());
  }
  std::map<std::string, Tensor> outputs;
  size_t next = 0;
  for (ValueId id : graph.outputs) {
    if (is_state_output(graph, id)) continue;
    if (next >= results->size()) break;
    outputs[graph.value(id).name] = std::move((*results)[next++]);
  }
  if (next != results->size() ||
      outputs.size() + graph.state_pairs.size() != graph.outputs.size()) {
    return internal_error(
        "backend '{}' returned {} outputs besides the state for graph '{}', "
        "which has {}",
        session_.options().backend, results->size(), graph.name,
        graph.outputs.size() - graph.state_pairs.size());
  }
  return outputs;
}

std::map<std::string, Tensor> Stream::snapshot() const {
  if (kv_cache_ != nullptr) return kv_cache_->snapshot();
  Result<std::map<std::string, Tensor>> saved = read_snapshot();
  if (!saved.is_ok()) return {};
  return std::move(saved).value();
}

Result<std::map<std::string, Tensor>> Stream::read_snapshot() const {
  if (kv_cache_ != nullptr) return kv_cache_->read_snapshot();
  if (!on_device_) return state_;
  SEQRT_ASSIGN_OR_RETURN(std::vector<Tensor> tensors,
                         session_.executable_->read_state(*device_state_));
  const Graph& graph = session_.graph();
  std::map<std::string, Tensor> state;
  for (size_t p = 0; p < graph.state_pairs.size() && p < tensors.size(); ++p) {
    state[graph.value(graph.state_pairs[p].input).name] = std::move(tensors[p]);
  }
  return state;
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
  if (kv_cache_ != nullptr) return kv_cache_->restore(std::move(state));
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
  on_device_ = false;  // loaded at the next run
  return Status::ok();
}

}  // namespace seqrt
