#include "runtime/partitioned_executable.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace seqrt {

// Held states in their parts, the others as tensors; per state pair.
class PartitionedExecutable::State : public ExecutableState {
 public:
  explicit State(const PartitionedExecutable* owner)
      : owner_(owner),
        parts(owner->parts_.size()),
        host(owner->state_in_.size()) {}

  std::vector<std::vector<int64_t>> dims() const override {
    std::vector<std::vector<int64_t>> all(host.size());
    for (size_t q = 0; q < parts.size(); ++q) {
      if (parts[q] == nullptr) continue;
      std::vector<std::vector<int64_t>> held = parts[q]->dims();
      const std::vector<int>& pairs = owner_->parts_[q].held;
      for (size_t k = 0; k < pairs.size() && k < held.size(); ++k) {
        all[pairs[k]] = std::move(held[k]);
      }
    }
    for (size_t p = 0; p < host.size(); ++p) {
      if (owner_->holder_[p] < 0) all[p] = host[p].dims();
    }
    return all;
  }

  const PartitionedExecutable* owner_;
  std::vector<std::unique_ptr<ExecutableState>> parts;  // per part
  std::vector<Tensor> host;  // per state pair, where no part holds it
};

namespace {

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

PartitionedExecutable::PartitionedExecutable(
    const Graph& graph, Partition partition,
    std::vector<PartitionTarget> targets, std::vector<Part> parts)
    : partition_(std::move(partition)),
      targets_(std::move(targets)),
      parts_(std::move(parts)) {
  for (const StatePair& pair : graph.state_pairs) {
    state_in_.push_back(graph.value(pair.input).name);
    state_out_.push_back(graph.value(pair.output).name);
  }
  for (ValueId id : graph.inputs) {
    inputs_.push_back(graph.value(id).name);
    state_input_.push_back(contains(state_in_, inputs_.back()));
  }
  std::set<std::string> read_later;
  for (ValueId id : graph.outputs) {
    outputs_.push_back(graph.value(id).name);
    state_output_.push_back(contains(state_out_, outputs_.back()));
    read_later.insert(outputs_.back());
    if (const Tensor* tensor = graph.constant(id)) {
      constant_outputs_[outputs_.back()] = *tensor;
    }
  }
  holder_.assign(state_in_.size(), -1);
  for (size_t q = 0; q < parts_.size(); ++q) {
    Part& part = parts_[q];
    // A segment compiled where its state cannot stay (a deferred one) is
    // fed its states as tensors like any other.
    if (!part.executable->keeps_state_on_device()) part.held.clear();
    std::vector<std::string> held_in, held_out;
    for (int p : part.held) {
      holder_[p] = static_cast<int>(q);
      held_in.push_back(state_in_[p]);
      held_out.push_back(state_out_[p]);
    }
    holds_state_ = holds_state_ || !part.held.empty();
    part.held_input.clear();
    for (const std::string& name : part.inputs) {
      part.held_input.push_back(contains(held_in, name));
    }
    part.held_output.clear();
    for (const std::string& name : part.outputs) {
      part.held_output.push_back(contains(held_out, name));
    }
  }
  for (size_t q = parts_.size(); q-- > 0;) {
    Part& part = parts_[q];
    part.last_read.assign(part.inputs.size(), false);
    for (size_t i = 0; i < part.inputs.size(); ++i) {
      part.last_read[i] = read_later.insert(part.inputs[i]).second;
    }
  }
}

Status PartitionedExecutable::run_parts(Values& values, State* state) const {
  for (size_t q = 0; q < parts_.size(); ++q) {
    const Part& part = parts_[q];
    const bool with_state = state != nullptr && !part.held.empty();
    std::vector<Tensor> in;
    for (size_t i = 0; i < part.inputs.size(); ++i) {
      if (with_state && part.held_input[i]) continue;
      auto it = values.find(part.inputs[i]);
      if (it == values.end()) {
        return internal_error("{} reads '{}', which no earlier segment wrote",
                              part.label, part.inputs[i]);
      }
      if (part.last_read[i]) {
        in.push_back(std::move(it->second));
        values.erase(it);
      } else {
        in.push_back(it->second);
      }
    }
    Result<std::vector<Tensor>> out =
        with_state
            ? part.executable->run_with_state(std::move(in), *state->parts[q])
            : part.executable->run(std::move(in));
    if (!out.is_ok()) return out.status().with_context(part.label);
    size_t next = 0;
    for (size_t o = 0; o < part.outputs.size(); ++o) {
      if (with_state && part.held_output[o]) continue;
      if (next >= out->size()) {
        return internal_error("{} returned {} output(s), fewer than planned",
                              part.label, out->size());
      }
      values[part.outputs[o]] = std::move((*out)[next++]);
    }
  }
  return Status::ok();
}

Result<std::vector<Tensor>> PartitionedExecutable::collect(
    Values& values, bool skip_state) const {
  std::vector<Tensor> outputs;
  for (size_t o = 0; o < outputs_.size(); ++o) {
    if (skip_state && state_output_[o]) continue;
    auto it = values.find(outputs_[o]);
    if (it == values.end()) {
      return internal_error("graph output '{}' was written by no segment",
                            outputs_[o]);
    }
    outputs.push_back(it->second);
  }
  return outputs;
}

Result<std::vector<Tensor>> PartitionedExecutable::run(
    std::vector<Tensor> inputs) const {
  if (inputs.size() != inputs_.size()) {
    return invalid_argument("the graph takes {} inputs, got {}", inputs_.size(),
                            inputs.size());
  }
  Values values = constant_outputs_;
  for (size_t i = 0; i < inputs.size(); ++i) {
    values[inputs_[i]] = std::move(inputs[i]);
  }
  SEQRT_RETURN_IF_ERROR(run_parts(values, nullptr));
  return collect(values, false);
}

Result<PartitionedExecutable::State*> PartitionedExecutable::own_state(
    const ExecutableState& state) const {
  const auto* held = dynamic_cast<const State*>(&state);
  if (held == nullptr || held->owner_ != this) {
    return invalid_argument(
        "the state was made by another executable; use one from this "
        "executable's create_state()");
  }
  return const_cast<State*>(held);
}

Result<std::unique_ptr<ExecutableState>> PartitionedExecutable::create_state(
    const std::vector<Tensor>& state) const {
  auto made = std::make_unique<State>(this);
  SEQRT_RETURN_IF_ERROR(write_state(*made, state));
  return std::unique_ptr<ExecutableState>(std::move(made));
}

Status PartitionedExecutable::write_state(
    ExecutableState& state, const std::vector<Tensor>& tensors) const {
  SEQRT_ASSIGN_OR_RETURN(State * own, own_state(state));
  if (tensors.size() != state_in_.size()) {
    return invalid_argument("the graph has {} state pair(s), got {} state(s)",
                            state_in_.size(), tensors.size());
  }
  for (size_t q = 0; q < parts_.size(); ++q) {
    const Part& part = parts_[q];
    if (part.held.empty()) continue;
    std::vector<Tensor> held;
    for (int p : part.held) held.push_back(tensors[p]);
    if (own->parts[q] != nullptr) {
      Status written = part.executable->write_state(*own->parts[q], held);
      if (!written.is_ok()) return written.with_context(part.label);
      continue;
    }
    Result<std::unique_ptr<ExecutableState>> made =
        part.executable->create_state(held);
    if (!made.is_ok()) return made.status().with_context(part.label);
    own->parts[q] = std::move(made).value();
  }
  for (size_t p = 0; p < tensors.size(); ++p) {
    if (holder_[p] < 0) own->host[p] = tensors[p];
  }
  return Status::ok();
}

Result<std::vector<Tensor>> PartitionedExecutable::read_state(
    const ExecutableState& state) const {
  SEQRT_ASSIGN_OR_RETURN(State * own, own_state(state));
  std::vector<Tensor> all = own->host;
  for (size_t q = 0; q < parts_.size(); ++q) {
    if (own->parts[q] == nullptr) continue;
    Result<std::vector<Tensor>> held =
        parts_[q].executable->read_state(*own->parts[q]);
    if (!held.is_ok()) return held.status().with_context(parts_[q].label);
    for (size_t k = 0; k < parts_[q].held.size() && k < held->size(); ++k) {
      all[parts_[q].held[k]] = std::move((*held)[k]);
    }
  }
  return all;
}

Result<std::vector<Tensor>> PartitionedExecutable::run_with_state(
    std::vector<Tensor> inputs, ExecutableState& state) const {
  SEQRT_ASSIGN_OR_RETURN(State * own, own_state(state));
  const size_t pairs = state_in_.size();
  if (inputs.size() + pairs != inputs_.size()) {
    return invalid_argument(
        "the graph takes {} input(s) besides its {} state(s), got {}",
        inputs_.size() - pairs, pairs, inputs.size());
  }
  Values values = constant_outputs_;
  size_t next = 0;
  for (size_t i = 0; i < inputs_.size(); ++i) {
    if (!state_input_[i]) values[inputs_[i]] = std::move(inputs[next++]);
  }
  for (size_t p = 0; p < pairs; ++p) {
    if (holder_[p] < 0) values[state_in_[p]] = std::move(own->host[p]);
  }
  SEQRT_RETURN_IF_ERROR(run_parts(values, own));
  for (size_t p = 0; p < pairs; ++p) {
    if (holder_[p] >= 0) continue;
    auto it = values.find(state_out_[p]);
    if (it == values.end()) {
      return internal_error("state output '{}' was written by no segment",
                            state_out_[p]);
    }
    own->host[p] = std::move(it->second);
    values.erase(it);
  }
  return collect(values, true);
}

std::vector<NodeProfile> PartitionedExecutable::profile() const {
  std::vector<NodeProfile> all;
  for (const Part& part : parts_) {
    std::vector<NodeProfile> p = part.executable->profile();
    all.insert(all.end(), p.begin(), p.end());
  }
  return all;
}

Result<std::vector<KernelPlanEntry>> PartitionedExecutable::kernel_plan(
    const std::map<std::string, int64_t>& bindings) const {
  std::vector<KernelPlanEntry> all;
  for (const Part& part : parts_) {
    Result<std::vector<KernelPlanEntry>> p =
        part.executable->kernel_plan(bindings);
    if (p.status().code() == StatusCode::kUnsupported) continue;
    if (!p.is_ok()) return p.status().with_context(part.label);
    all.insert(all.end(), p->begin(), p->end());
  }
  return all;
}

std::string PartitionedExecutable::placement_report(
    const std::map<std::string, int64_t>& bindings) const {
  std::vector<std::string> unknown;
  const uint64_t bytes =
      crossing_bytes(partition_, targets_, bindings, &unknown);
  std::string text = fmt::format(
      "{} segment(s) on [{}]; {} bytes cross between host and device per "
      "run{}{}\n",
      parts_.size(), fmt::join(partition_.targets, ", "), bytes,
      holds_state_ ? " of a Stream (its held states stay on the device)" : "",
      unknown.empty()
          ? std::string()
          : fmt::format(" (and {} value(s) of unbound size: bind them with "
                        "--bind)",
                        unknown.size()));
  for (size_t s = 0; s < partition_.segments.size(); ++s) {
    const Segment& segment = partition_.segments[s];
    text += fmt::format(
        "  segment {} on {}: {} node(s), {} input(s) in, {} output(s) out, {} "
        "constant(s) held",
        s, partition_.targets[segment.target], segment.nodes.size(),
        segment.graph.inputs.size(), segment.graph.outputs.size(),
        segment.graph.constants.size());
    if (s < parts_.size() && !parts_[s].held.empty()) {
      // A Stream's states there never cross; one-off runs still feed them.
      text += fmt::format(", {} state pair(s) kept on the device by a Stream",
                          parts_[s].held.size());
    }
    text += "\n";
    if (!segment.host_parameters.empty()) {
      // Crossing with the rest; read on the host before the device records.
      text += fmt::format("    host parameter(s), recorded per value: {}\n",
                          fmt::join(segment.host_parameters, ", "));
    }
    // Why each node left the first backend (its refusal there), which
    // names the node itself.
    for (int n : segment.nodes) {
      if (!partition_.why[n].empty()) {
        text += fmt::format("    {}\n", partition_.why[n]);
      }
    }
    if (segment.control && s < parts_.size()) {
      text += segment.graph.nodes.at(0).op == "Loop"
                  ? "    its Loop runs on the host, the body partitioned "
                    "again:\n"
                  : "    its If runs on the host, each branch partitioned "
                    "again:\n";
      text += parts_[s].executable->placement_report(bindings);
    }
  }
  return text;
}

}  // namespace seqrt
